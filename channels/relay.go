package channels

import (
	"html"
	"net/http"
	"strings"

	twclient "github.com/twilio/twilio-go/client"

	"github.com/bookonce/bookonce/tenants"
)

// Routes of Twilio ConversationRelay: a number whose voice URL is
// RouteVoiceRelay is answered with <Connect><ConversationRelay>, and
// Twilio then speaks with the gateway over a WebSocket at
// RouteVoiceRelaySocket: the caller's sentences come in as text, the
// answers go out as text tokens, spoken at once instead of after a
// <Gather> round trip.
const (
	RouteVoiceRelay       = "/webhooks/twilio/voice/relay"
	RouteVoiceRelaySocket = "/webhooks/twilio/voice/relay/socket"
)

// voiceRelay answers a call with the ConversationRelay TwiML: the socket's
// public wss:// URL (Twilio signs the handshake against it), the tenant's
// language and greeting, and speech that may interrupt the agent.
func (g *Gateway) voiceRelay(w http.ResponseWriter, r *http.Request) {
	p := g.owner(r)
	if p == nil {
		writeTwiML(w, unconfiguredVoice)
		return
	}
	if who := identify(r.PostForm.Get("From"), g.Region); who.Number == "" {
		writeTwiML(w, sorryTwiML(p, who.Reason))
		return
	}
	writeTwiML(w, relayTwiML(p, g.relaySocketURL()))
}

// relayTwiML connects a call to the relay socket at url.
func relayTwiML(p *tenants.Profile, url string) string {
	lang := voiceLanguage(p)
	return `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><ConversationRelay url="` + html.EscapeString(url) +
		`" language="` + lang + `" interruptible="any" welcomeGreeting="` + html.EscapeString(say(p, tenants.TemplateVoiceGreeting)) +
		`"/></Connect></Response>`
}

// relaySocketURL is the socket's public URL: PUBLIC_BASE_URL with the
// WebSocket scheme.
func (g *Gateway) relaySocketURL() string {
	base := g.PublicBaseURL
	switch {
	case strings.HasPrefix(base, "https://"):
		base = "wss://" + strings.TrimPrefix(base, "https://")
	case strings.HasPrefix(base, "http://"):
		base = "ws://" + strings.TrimPrefix(base, "http://")
	}
	return strings.TrimSuffix(base, "/") + RouteVoiceRelaySocket
}

// relaySigned admits a socket handshake that Twilio signed: the
// X-Twilio-Signature of the socket's public URL (with its query) and no
// parameters, as for any Twilio request.
func (g *Gateway) relaySigned(next http.HandlerFunc) http.Handler {
	validator := twclient.NewRequestValidator(g.TwilioAuthToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		url := g.relaySocketURL()
		if q := r.URL.RawQuery; q != "" {
			url += "?" + q
		}
		sig := r.Header.Get("X-Twilio-Signature")
		if sig == "" || !validator.Validate(url, map[string]string{}, sig) {
			g.Metrics.rejected.WithLabelValues(RouteVoiceRelaySocket, "signature").Inc()
			g.log().Warn("relay handshake with a missing or wrong signature")
			http.Error(w, "invalid signature", http.StatusForbidden)
			return
		}
		next(w, r)
	})
}
