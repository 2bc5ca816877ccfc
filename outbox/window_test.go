package outbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/twilio"
)

const reminderSID = "HX0123456789abcdef0123456789abcdef"

// windowEnv is a relay whose Window and Template follow one shop: the
// customer's messages are told to the fake Twilio and to the relay's
// window at the same moment of one clock, as the gateway's inbox would.
type windowEnv struct {
	*env
	wrote     map[string]time.Time
	windowErr error
}

func setupWindow(t *testing.T) *windowEnv {
	e := &windowEnv{env: setup(t), wrote: map[string]time.Time{}}
	e.fake.SetNow(e.now)
	e.fake.ApproveContent(reminderSID, "Erinnerung: {{1}} am {{2}}.")
	return e
}

// write is the customer writing to the shop on WhatsApp now.
func (e *windowEnv) write(customer string) {
	e.fake.Inbound("whatsapp:"+customer, "whatsapp:"+from, "Hallo")
	e.wrote[customer] = e.now()
}

func (e *windowEnv) relay() *outbox.Sender {
	s := e.env.relay()
	s.Window = func(_ context.Context, _, recipient string, now time.Time) (bool, error) {
		if e.windowErr != nil {
			return false, e.windowErr
		}
		at, ok := e.wrote[recipient]
		return ok && !at.Before(outbox.WindowOpenSince(now)), nil
	}
	s.Template = func(_, name string, fields map[string]string) (outbox.Template, bool) {
		if name != "reminder" {
			return outbox.Template{}, false
		}
		vars := map[string]string{"1": fields["service"], "2": fields["when"]}
		body, _ := twilio.RenderContent("Erinnerung: {{1}} am {{2}}.", vars)
		return outbox.Template{ContentSid: reminderSID, Vars: vars, Body: body}, true
	}
	return s
}

func (e *windowEnv) reserveReminder(ref, template string) outbox.Message {
	e.t.Helper()
	m, err := e.store.Reserve(context.Background(), "key-"+ref, outbox.Message{
		Tenant: "tenant-1", Reference: ref, Kind: "reminder-24h", Channel: "whatsapp", Recipient: customer,
		Body: "Erinnerung: Ihr Termin Reifenwechsel ist am Do 03.12. 14:00. Wir freuen uns auf Sie.", Template: template,
		Fields: map[string]string{"service": "Reifenwechsel", "when": "Do 03.12. 14:00"},
	})
	require.NoError(e.t, err)
	return m
}

// TestWhatsAppOutsideTheWindowGoesAsTheApprovedTemplate: the relay
// decides at send time. While the customer wrote within 24 hours their
// message goes as its own text; once the window has closed it goes as the
// shop's approved template, which WhatsApp delivers, never as text that
// Twilio would fail with 63016. A message without a template (a reply)
// goes as text.
func TestWhatsAppOutsideTheWindowGoesAsTheApprovedTemplate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		wroteAgo  time.Duration // 0: never wrote
		template  string
		content   bool
		delivered bool
	}{
		{"wrote an hour ago: the text", time.Hour, "reminder", false, true},
		{"wrote 23 hours ago: the text", 23 * time.Hour, "reminder", false, true},
		{"wrote 25 hours ago: the template", 25 * time.Hour, "reminder", true, true},
		{"never wrote: the template", 0, "reminder", true, true},
		{"23h55m ago, inside the relay's margin: the template", 23*time.Hour + 55*time.Minute, "reminder", true, true},
		{"no template for the message: the text, which WhatsApp refuses", 25 * time.Hour, "alternatives", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := setupWindow(t)
			if tc.wroteAgo > 0 {
				e.write(customer)
				e.advance(tc.wroteAgo)
			}
			m := e.reserveReminder("bk_1", tc.template)
			require.Equal(t, 1, e.runOnce(e.relay()))
			require.Equal(t, "sent", e.row(m.ID).State)

			msgs := e.fake.Messages()
			require.Len(t, msgs, 1, "one message reached Twilio")
			got := msgs[0]
			if tc.content {
				require.Equal(t, reminderSID, got.ContentSid)
				require.Equal(t, "Erinnerung: Reifenwechsel am Do 03.12. 14:00.", got.Body)
			} else {
				require.Empty(t, got.ContentSid)
				require.Equal(t, m.Body, got.Body)
			}
			if tc.delivered {
				require.Equal(t, "sent", got.Status, "it reached the customer")
			} else {
				require.Equal(t, twilio.ErrCodeOutsideWindow, got.ErrorCode)
			}
		})
	}
}

// TestWhatsAppWindowUnknownLeavesTheMessagePending: a window that cannot
// be read (the database is away) is no licence to send either form: the
// row stays pending and goes once it can be read.
func TestWhatsAppWindowUnknownLeavesTheMessagePending(t *testing.T) {
	t.Parallel()
	e := setupWindow(t)
	m := e.reserveReminder("bk_1", "reminder")
	e.windowErr = errors.New("connection refused")
	s := e.relay()
	_, err := s.RunOnce(context.Background())
	require.Error(t, err)
	require.Equal(t, "pending", e.row(m.ID).State)
	require.Empty(t, e.fake.Messages())

	e.windowErr = nil
	require.Equal(t, 1, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 1)
	require.Equal(t, reminderSID, e.fake.Messages()[0].ContentSid)
}

// TestTemplateWithLostAnswerIsFoundNotSentTwice: a template whose create
// answer was lost is reconciled by the text it put at Twilio (the
// template's, not the row's), found and recorded: one message.
func TestTemplateWithLostAnswerIsFoundNotSentTwice(t *testing.T) {
	t.Parallel()
	e := setupWindow(t)
	m := e.reserveReminder("bk_1", "reminder")
	s := e.relay()
	e.fake.DropNextResponse()
	require.Equal(t, 0, e.runOnce(s), "the answer was lost: unknown outcome")
	require.Equal(t, "pending", e.row(m.ID).State)

	e.advance(2 * sendTimeout)
	require.Equal(t, 1, e.runOnce(s))
	got := e.row(m.ID)
	require.Equal(t, "sent", got.State)
	msgs := e.fake.Messages()
	require.Len(t, msgs, 1, "found, not sent again")
	require.Equal(t, msgs[0].Sid, got.ProviderID)
}
