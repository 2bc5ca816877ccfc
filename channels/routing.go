package channels

import (
	"html"
	"net/http"
	"strconv"

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
	if p != nil {
		if text, err := p.Render(name, tenants.MessageData{}); err == nil {
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
	lang := voiceLanguage(p)
	return `<?xml version="1.0" encoding="UTF-8"?><Response><Gather input="speech" language="` + lang +
		`" speechTimeout="auto" action="` + RouteVoiceGather + `?step=` + strconv.Itoa(step) + `" method="POST"><Say language="` + lang + `">` +
		html.EscapeString(say(p, prompt)) + `</Say></Gather></Response>`
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
