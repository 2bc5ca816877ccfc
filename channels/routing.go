package channels

import (
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bookonce/bookonce/tenants"
)

// owner is the tenant owning the number a webhook went to (its To); nil
// when no tenant does. WhatsApp's "whatsapp:+49…" and a call's "+49…"
// name the same number.
func (g *Gateway) owner(r *http.Request) *tenants.Profile {
	if g.Tenants == nil {
		return nil
	}
	p, ok := g.Tenants.ByNumber(r.PostForm.Get("To"))
	if !ok {
		return nil
	}
	return p
}

// statusTenant is the tenant of a status callback: it reports a message
// a tenant's number sent (From), so To is the customer; "-" when neither
// is a configured number. The callback's effect never depends on it.
func (g *Gateway) statusTenant(r *http.Request) string {
	if g.Tenants != nil {
		for _, n := range []string{r.PostForm.Get("From"), r.PostForm.Get("To")} {
			if p, ok := g.Tenants.ByNumber(n); ok {
				return p.ID
			}
		}
	}
	return unconfiguredTenant
}

// unconfiguredWhatsApp answers a WhatsApp message to a number no tenant
// owns; nobody's language is known, so it says it in both.
const unconfiguredWhatsApp = `<?xml version="1.0" encoding="UTF-8"?><Response><Message>` +
	`This number is not configured for bookings yet. Diese Nummer ist noch nicht für Buchungen eingerichtet.` +
	`</Message></Response>`

// unconfiguredVoice ends a call to a number no tenant owns.
const unconfiguredVoice = `<?xml version="1.0" encoding="UTF-8"?><Response>` +
	`<Say language="en-GB">This number is not configured for bookings yet. Goodbye.</Say>` +
	`<Say language="de-DE">Diese Nummer ist noch nicht für Buchungen eingerichtet. Auf Wiederhören.</Say>` +
	`<Hangup/></Response>`

// voiceLanguage is the speech language Twilio uses for a tenant.
func voiceLanguage(p *tenants.Profile) string {
	if p != nil && p.Language == tenants.English {
		return "en-GB"
	}
	return "de-DE"
}

// say renders a spoken template of the tenant; the built-in German text
// when there is no tenant or its text fails (checked when applied).
func say(p *tenants.Profile, name tenants.TemplateName) string {
	return sayWith(p, name, tenants.MessageData{})
}

// sayWith is say with the data the template may name.
func sayWith(p *tenants.Profile, name tenants.TemplateName, data tenants.MessageData) string {
	if p != nil {
		if text, err := p.Render(name, data); err == nil {
			return text
		}
	}
	text, _ := tenants.DefaultText(tenants.German, name)
	return text
}

// gatherTwiML asks for the wish by speech; each answer posts to the gather
// route with the next step number, which makes the inbox key of a spoken
// sentence CallSid + step.
func gatherTwiML(p *tenants.Profile, step int, prompt tenants.TemplateName) string {
	return gatherSaying(p, step, say(p, prompt))
}

// gatherSaying is gatherTwiML with the prompt's text already rendered.
func gatherSaying(p *tenants.Profile, step int, text string) string {
	lang := voiceLanguage(p)
	return `<?xml version="1.0" encoding="UTF-8"?><Response><Gather input="speech" language="` + lang +
		`" speechTimeout="auto" action="` + RouteVoiceGather + `?step=` + strconv.Itoa(step) + `" method="POST"><Say language="` + lang + `">` +
		html.EscapeString(text) + `</Say></Gather></Response>`
}

// waitTwiML keeps a caller on the line while the sentence of step is
// being handled: "one moment" on the first poll only, a pause, then the
// status route with the poll number n. Twilio signs the redirected
// request like any other, so step and n cannot be forged.
func waitTwiML(p *tenants.Profile, step, n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Response>`)
	if n == 1 {
		lang := voiceLanguage(p)
		b.WriteString(`<Say language="` + lang + `">` + html.EscapeString(say(p, tenants.TemplateVoiceOneMoment)) + `</Say>`)
	}
	b.WriteString(`<Pause length="` + strconv.Itoa(int(voicePause/time.Second)) + `"/><Redirect method="POST">`)
	b.WriteString(html.EscapeString(StatusURL(step, n)))
	b.WriteString(`</Redirect></Response>`)
	return b.String()
}

// StatusURL is the status route's address for poll n of the sentence of
// step, as the wait TwiML names it (relative: Twilio resolves it against
// the gateway's public URL, which it then signs).
func StatusURL(step, n int) string {
	return RouteVoiceStatus + "?step=" + strconv.Itoa(step) + "&n=" + strconv.Itoa(n)
}

// sorryTwiML ends a call that cannot lead to a booking: to a number no
// tenant owns, or from a caller we could not text a confirmation to (who
// is sent to WhatsApp).
func sorryTwiML(p *tenants.Profile, reason string) string {
	if reason == ReasonUnconfiguredNumber {
		return unconfiguredVoice
	}
	name := tenants.TemplateVoiceUnknownNumber
	if reason == ReasonMissingID {
		name = tenants.TemplateVoiceUnassigned
	}
	lang := voiceLanguage(p)
	return `<?xml version="1.0" encoding="UTF-8"?><Response><Say language="` + lang + `">` + html.EscapeString(say(p, name)) + `</Say><Hangup/></Response>`
}
