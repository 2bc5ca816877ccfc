package twilio

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Sign computes X-Twilio-Signature the way Twilio does: HMAC-SHA1 over the
// full URL followed by the POST parameters sorted by name, base64. Used by
// the simulator and tests; the gateway verifies with twilio-go.
func Sign(authToken, fullURL string, params url.Values) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(fullURL)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteString(params.Get(k))
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Simulator posts correctly signed Twilio webhooks, so a person (or a
// test) can drive the whole flow without Twilio.
type Simulator struct {
	// GatewayURL is where requests go; PublicBaseURL is what the gateway
	// verifies against (they differ behind a proxy or tunnel).
	GatewayURL, PublicBaseURL, AuthToken string
	HTTP                                 *http.Client
	// Twilio, when set, is told of every inbound message the simulator
	// delivers (FakeServer.Inbound), as Twilio itself sees the messages
	// it relays: the customer service window and opt-outs follow them.
	Twilio *FakeServer
}

// Post sends one signed form to route (with query) and returns status and body.
func (s Simulator) Post(ctx context.Context, routeWithQuery string, form url.Values) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(s.GatewayURL, "/")+routeWithQuery, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", err
	}
	if s.Twilio != nil && form.Get("MessageSid") != "" && form.Has("Body") {
		s.Twilio.Receive(form)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", Sign(s.AuthToken, strings.TrimRight(s.PublicBaseURL, "/")+routeWithQuery, form))
	hc := s.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("post %s: %w", routeWithQuery, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(body), nil
}

// SimulatedShop is the shop's number the simulated customers write to and
// call (the demo tenant's).
const SimulatedShop = "+4930123456"

// WhatsApp returns the form of an inbound WhatsApp message.
func WhatsApp(sid, from, text string) url.Values {
	digits := strings.TrimPrefix(from, "+")
	return url.Values{
		"MessageSid": {sid}, "SmsMessageSid": {sid}, "AccountSid": {"ACsimulated"},
		"From": {"whatsapp:" + from}, "To": {"whatsapp:" + SimulatedShop}, "WaId": {digits}, "Body": {text}, "NumMedia": {"0"},
	}
}

// SMS returns the form of an inbound SMS to the shop's number.
func SMS(sid, from, text string) url.Values {
	return url.Values{
		"MessageSid": {sid}, "SmsMessageSid": {sid}, "SmsSid": {sid}, "AccountSid": {"ACsimulated"},
		"From": {from}, "To": {SimulatedShop}, "Body": {text}, "NumMedia": {"0"}, "NumSegments": {"1"},
	}
}

// Speech returns the form of a voice gather result.
func Speech(callSid, from, text string) url.Values {
	return url.Values{
		"CallSid": {callSid}, "AccountSid": {"ACsimulated"}, "From": {from}, "To": {SimulatedShop},
		"SpeechResult": {text}, "Confidence": {"0.92"},
	}
}

// NewSID returns a random Twilio-style SID with prefix ("SM", "CA").
func NewSID(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
