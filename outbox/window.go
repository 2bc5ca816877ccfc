package outbox

import (
	"context"
	"fmt"
	"time"
)

// WhatsApp delivers free-form text only within 24 hours of the
// customer's last message to the shop; outside that window only an
// approved template goes out, and free text sent anyway is accepted and
// then fails (Twilio error 63016). The relay therefore decides, each time
// it sends a WhatsApp row that names a template, which of the two leaves:
// the row's text while the window is open, the template once it closed.
// A row without a template (a reply to a message just received) always
// goes as text.

// Template is a message as an approved template: the provider's content
// ID, its variables by placeholder number, and the text the customer
// reads (what the provider lists as the message's body, so that a lookup
// finds it).
type Template struct {
	ContentSid string
	Vars       map[string]string
	Body       string
}

// ContentSender is a Provider that can send approved templates
// (twilio.Client). Its errors are classified as Send's.
type ContentSender interface {
	SendContent(ctx context.Context, from, to, contentSid string, vars map[string]string, callback string) (string, error)
}

// windowMargin is how long before the 24 hours end the relay no longer
// trusts the window: the provider measures from its own receipt and its
// own send, both a little apart from ours.
const windowMargin = 10 * time.Minute

// ServiceWindow is WhatsApp's customer service window.
const ServiceWindow = 24 * time.Hour

// WindowOpenSince returns the earliest last-message time that still opens
// the window at now (with the relay's margin).
func WindowOpenSince(now time.Time) time.Time {
	return now.Add(-ServiceWindow + windowMargin)
}

// asTemplate decides how a fresh attempt of c leaves: nil for its text,
// else the approved template. err (the window could not be read) leaves
// the row for a later run: an unknown window is no licence for either.
func (s *Sender) asTemplate(ctx context.Context, c claimed) (*Template, error) {
	if c.channel != "whatsapp" || c.template == "" || s.Window == nil || s.Template == nil {
		return nil, nil
	}
	open, err := s.Window(ctx, c.tenant, c.recipient, s.now())
	if err != nil {
		return nil, fmt.Errorf("outbox message %s: whatsapp window: %w", c.id, err)
	}
	if open {
		return nil, nil
	}
	t, ok := s.Template(c.tenant, c.template, c.fields)
	if !ok {
		// Sent as text, which WhatsApp will refuse (63016, recorded from
		// the status callback on the row and the ops page): the shop has
		// no approved template for it, and apply said so.
		s.log().Warn("outbox message outside the whatsapp window without an approved template; sent as text",
			"id", c.id, "tenant", c.tenant, "template", c.template)
		return nil, nil
	}
	return &t, nil
}

// sentBody is the text the last attempt of c put at the provider: its
// template's when it went as one (rebuilt from the row's fields), else
// its own. ok is false when the template is no longer the one sent (the
// configuration changed its content SID): the lookup cannot know the
// text, and the row goes to a person.
func (s *Sender) sentBody(c claimed) (string, bool) {
	if c.contentSid == "" {
		return c.body, true
	}
	if s.Template == nil {
		return "", false
	}
	t, ok := s.Template(c.tenant, c.template, c.fields)
	if !ok || t.ContentSid != c.contentSid {
		return "", false
	}
	return t.Body, true
}

// deliver calls the provider for c: as the template t, or as text.
func (s *Sender) deliver(ctx context.Context, c claimed, t *Template, callback string) (string, error) {
	to := address(c.channel, c.recipient)
	if t == nil {
		return s.Provider.Send(ctx, c.sender, to, c.body, callback)
	}
	cs, ok := s.Provider.(ContentSender)
	if !ok {
		return s.Provider.Send(ctx, c.sender, to, t.Body, callback)
	}
	return cs.SendContent(ctx, c.sender, to, t.ContentSid, t.Vars, callback)
}
