package tenants

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bookonce/bookonce/twilio"
)

// WhatsApp delivers free-form text only within 24 hours of the customer's
// last message (the customer service window); outside it only a template
// the shop had approved goes out, sent through Twilio's Content API. A
// shop configures, per language and message, the approved template's
// content SID, its text as approved (with Twilio's numbered placeholders)
// and which message field fills each placeholder:
//
//	whatsapp_templates:
//	  de:
//	    reminder:
//	      content_sid: HX0123456789abcdef0123456789abcdef
//	      text: "Erinnerung: {{1}} am {{2}}."
//	      variables: [service, when]
//
// The outbox chooses at send time: inside the window the message's own
// text, outside it the template.

// WhatsAppTemplate is an approved WhatsApp content template.
type WhatsAppTemplate struct {
	ContentSid string `json:"content_sid"`
	// Text is the template as approved, with placeholders {{1}} … {{n}}.
	Text string `json:"text"`
	// Variables name the message field (MessageField…) that fills each
	// placeholder: Variables[0] fills {{1}}.
	Variables []string `json:"variables"`
}

// The message fields a WhatsApp template's placeholder can take
// (MessageData.Fields).
const (
	FieldService      = "service"
	FieldWhen         = "when"
	FieldAmount       = "amount"
	FieldLink         = "link"
	FieldUntil        = "until"
	FieldBooking      = "booking"
	FieldAlternatives = "alternatives"
)

var messageFields = []string{FieldService, FieldWhen, FieldAmount, FieldLink, FieldUntil, FieldBooking, FieldAlternatives}

// Fields are d's values by field name, what a WhatsApp template's
// variables name.
func (d MessageData) Fields() map[string]string {
	return map[string]string{
		FieldService: d.Service, FieldWhen: d.When, FieldAmount: d.Amount, FieldLink: d.Link,
		FieldUntil: d.Until, FieldBooking: d.Booking, FieldAlternatives: strings.Join(d.Alternatives, ", "),
	}
}

// WindowTemplates are the messages that can leave more than 24 hours
// after the customer last wrote: confirmations after a late payment,
// reminders, links and their expiry, cancellations and moves by the shop,
// the endings of a booking. Conversation replies answer a message just
// received and are never among them. A tenant with WhatsApp templates has
// one for each of these in every language it configures.
var WindowTemplates = []TemplateName{
	TemplateConfirmation, TemplateAlreadyBooked, TemplateAlreadyHeld, TemplateAlternatives, TemplateNotBooked,
	TemplateInReview, TemplatePaymentLink, TemplatePaymentExpired, TemplatePaymentUnavailable, TemplatePaymentRefundedLate,
	TemplateReminder, TemplateReminderEarly, TemplateBookingCancelled, TemplateBookingCancelledKept,
	TemplateBookingCancelledRefunded, TemplateBookingRescheduled,
}

// Fill renders t for a message's fields: the content variables by
// placeholder number and the text WhatsApp shows (what Twilio lists as
// the message's body).
func (t WhatsAppTemplate) Fill(fields map[string]string) (vars map[string]string, body string) {
	vars = make(map[string]string, len(t.Variables))
	for i, name := range t.Variables {
		vars[strconv.Itoa(i+1)] = fields[name]
	}
	body, _ = twilio.RenderContent(t.Text, vars)
	return vars, body
}

// whatsApp reads "de: {reminder: {content_sid, text, variables}}".
func (r *reader) whatsApp(n *yaml.Node, path string) map[Language]map[TemplateName]WhatsAppTemplate {
	out := map[Language]map[TemplateName]WhatsAppTemplate{}
	for _, lp := range r.pairs(n, path) {
		lpath := join(path, lp.key)
		byName := map[TemplateName]WhatsAppTemplate{}
		for _, tp := range r.pairs(lp.value, lpath) {
			tpath := join(lpath, tp.key)
			m := r.mapping(tp.value, tpath, "!content_sid", "!text", "variables")
			var w WhatsAppTemplate
			w.ContentSid, _ = r.str(m["content_sid"], join(tpath, "content_sid"))
			w.Text, _ = r.str(m["text"], join(tpath, "text"))
			w.Variables = r.texts(m["variables"], join(tpath, "variables"))
			byName[TemplateName(tp.key)] = w
		}
		out[Language(lp.key)] = byName
	}
	return out
}

// whatsApp checks a tenant's WhatsApp templates: known languages and
// messages, content SIDs, placeholders {{1}}…{{n}} each filled by a known
// field, and one template for every WindowTemplates message in each
// configured language, the tenant's own among them.
func (v *validator) whatsApp(p string, t Tenant) {
	if len(t.WhatsApp) == 0 {
		return
	}
	if _, ok := t.WhatsApp[t.Language]; !ok {
		v.fail(p, "has no templates in the tenant's language %s", t.Language)
	}
	for l, byName := range t.WhatsApp {
		lp := join(p, string(l))
		if !supported(l) {
			v.fail(lp, "unsupported language %q (supported: %s)", l, languageList())
			continue
		}
		for name, w := range byName {
			np := join(lp, string(name))
			if !slices.Contains(WindowTemplates, name) {
				v.fail(np, "not a message that can leave outside the 24-hour window (these are: %s)", templateList(WindowTemplates))
				continue
			}
			v.whatsAppTemplate(np, w)
		}
		var missing []TemplateName
		for _, name := range WindowTemplates {
			if _, ok := byName[name]; !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			v.fail(lp, "no approved template for %s: these messages can leave more than 24 hours after the customer last wrote, when WhatsApp delivers nothing else", templateList(missing))
		}
	}
}

func (v *validator) whatsAppTemplate(p string, w WhatsAppTemplate) {
	if !twilio.ValidContentSID(w.ContentSid) {
		v.fail(join(p, "content_sid"), "must be a Twilio content SID (HX and 32 hex digits), got %q", w.ContentSid)
	}
	got := twilio.Placeholders(w.Text)
	for i, n := range got {
		if n != i+1 {
			v.fail(join(p, "text"), "placeholders must be {{1}} to {{%d}} in order of first use, got {{%d}} at position %d", len(got), n, i+1)
			break
		}
	}
	if len(got) != len(w.Variables) {
		v.fail(join(p, "variables"), "the text has %d placeholders and %d variables", len(got), len(w.Variables))
	}
	for j, f := range w.Variables {
		if !slices.Contains(messageFields, f) {
			v.fail(index(join(p, "variables"), j), "unknown field %q (fields: %s)", f, strings.Join(messageFields, ", "))
		}
	}
}

func templateList(names []TemplateName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// normaliseWhatsApp drops empty languages; nil for none.
func normaliseWhatsApp(in map[Language]map[TemplateName]WhatsAppTemplate) map[Language]map[TemplateName]WhatsAppTemplate {
	out := map[Language]map[TemplateName]WhatsAppTemplate{}
	for l, byName := range in {
		if len(byName) > 0 {
			out[l] = maps.Clone(byName)
		}
	}
	return nilIfEmptyMap(out)
}

func sameWhatsApp(a, b WhatsAppTemplate) bool {
	return a.ContentSid == b.ContentSid && a.Text == b.Text && slices.Equal(a.Variables, b.Variables)
}
