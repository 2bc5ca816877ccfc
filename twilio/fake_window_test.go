package twilio_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	twclient "github.com/twilio/twilio-go/client"

	"github.com/bookonce/bookonce/twilio"
)

// callbackSink records the status callbacks it receives whose
// X-Twilio-Signature verifies with token, as the gateway verifies them.
type callbackSink struct {
	srv      *httptest.Server
	mu       sync.Mutex
	statuses map[string]map[string]string // MessageSid -> form
}

func newCallbackSink(t *testing.T, token string) *callbackSink {
	s := &callbackSink{statuses: map[string]map[string]string{}}
	v := twclient.NewRequestValidator(token)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		params := map[string]string{}
		for k := range r.PostForm {
			params[k] = r.PostForm.Get(k)
		}
		if !v.Validate(s.srv.URL+r.URL.RequestURI(), params, r.Header.Get("X-Twilio-Signature")) {
			http.Error(w, "bad signature", http.StatusForbidden)
			return
		}
		s.mu.Lock()
		s.statuses[params["MessageSid"]] = params
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *callbackSink) of(sid string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statuses[sid]
}

// TestFakeEnforcesTheWhatsAppWindow: as on a real WhatsApp sender,
// free-form text reaches a customer only within 24 hours of the
// customer's last message to that sender; outside it the create is
// accepted and the message then fails with 63016, told by a signed status
// callback, while an approved content template goes out at any time. SMS
// has no window.
func TestFakeEnforcesTheWhatsAppWindow(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	sink := newCallbackSink(t, f.AuthToken)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	f.SetNow(func() time.Time { return now })
	const shop, other, customer = "+4930123456", "+4930999999", "+4915112345678"
	const reminder = "HX0123456789abcdef0123456789abcdef"
	f.ApproveContent(reminder, "Erinnerung: {{1}} am {{2}}. Bis bald!")
	c := twilio.New(f.AccountSID, f.AuthToken, shop, twilio.WithBaseURL(f.URL()))
	ctx := context.Background()

	steps := []struct {
		name    string
		inbound string        // who writes the shop first ("" for nobody)
		advance time.Duration // the clock moves before the send
		from    string        // "" for the shop
		to      string
		content bool
		failed  bool
	}{
		{"free text to a customer who never wrote", "", 0, "", "whatsapp:" + customer, false, true},
		{"a template to the same customer", "", 0, "", "whatsapp:" + customer, true, false},
		{"SMS has no window", "", 0, "", customer, false, false},
		{"free text right after the customer wrote", customer, 0, "", "whatsapp:" + customer, false, false},
		{"free text 23 hours later", "", 23 * time.Hour, "", "whatsapp:" + customer, false, false},
		{"another sender's window is its own", "", 0, other, "whatsapp:" + customer, false, true},
		{"free text 25 hours after the last message", "", 2 * time.Hour, "", "whatsapp:" + customer, false, true},
		{"a template 25 hours after", "", 0, "", "whatsapp:" + customer, true, false},
		{"free text once the customer wrote again", customer, 0, "", "whatsapp:" + customer, false, false},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if s.inbound != "" {
			f.Inbound("whatsapp:"+s.inbound, "whatsapp:"+shop, "Hallo")
		}
		var sid string
		var err error
		if s.content {
			sid, err = c.SendContent(ctx, s.from, s.to, reminder, map[string]string{"1": "Haarschnitt", "2": "Do 03.12. 14:00"}, sink.srv.URL+"/status?outbox_id=m1")
		} else {
			sid, err = c.Send(ctx, s.from, s.to, "Bis morgen!", sink.srv.URL+"/status?outbox_id=m1")
		}
		require.NoError(t, err, "%s: the create is accepted either way", s.name)
		f.Settle()
		msgs := f.Messages()
		m := msgs[len(msgs)-1]
		require.Equal(t, sid, m.Sid, s.name)
		if !s.failed {
			require.Equal(t, "sent", m.Status, s.name)
			require.Nil(t, sink.of(sid), "%s: no callback for a message that went out (ReportDelivered off)", s.name)
			continue
		}
		require.Equal(t, "failed", m.Status, s.name)
		require.Equal(t, twilio.ErrCodeOutsideWindow, m.ErrorCode, s.name)
		cb := sink.of(sid)
		require.NotNil(t, cb, "%s: the failure is told by a signed status callback", s.name)
		require.Equal(t, "failed", cb["MessageStatus"], s.name)
		require.Equal(t, "63016", cb["ErrorCode"], s.name)
	}
	var content []string
	for _, m := range f.Messages() {
		if m.ContentSid != "" {
			content = append(content, m.Body)
		}
	}
	require.Equal(t, []string{"Erinnerung: Haarschnitt am Do 03.12. 14:00. Bis bald!", "Erinnerung: Haarschnitt am Do 03.12. 14:00. Bis bald!"}, content,
		"a template's message carries its rendered text, as Twilio lists it")
}

// TestFakeRefusesUnknownContent: a ContentSid that is no approved
// template of the account is refused with 21655, variables that are not
// a JSON object or miss a placeholder with 21656; both are final (the
// same request fails the same way) and commit nothing.
func TestFakeRefusesUnknownContent(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	const approved = "HX0123456789abcdef0123456789abcdef"
	f.ApproveContent(approved, "Ihr Link: {{1}}")
	c := twilio.New(f.AccountSID, f.AuthToken, "+4930123456", twilio.WithBaseURL(f.URL()))
	cases := []struct {
		name string
		sid  string
		vars map[string]string
		code int
	}{
		{"unknown SID", "HXffffffffffffffffffffffffffffffff", map[string]string{"1": "x"}, twilio.ErrCodeContentSid},
		{"malformed SID", "HX123", map[string]string{"1": "x"}, twilio.ErrCodeContentSid},
		{"a placeholder without its value", approved, map[string]string{"2": "x"}, twilio.ErrCodeContentVariables},
	}
	for _, tc := range cases {
		_, err := c.SendContent(context.Background(), "", "whatsapp:+4915112345678", tc.sid, tc.vars, "")
		var te *twilio.Error
		require.True(t, errors.As(err, &te), "%s: %v", tc.name, err)
		require.Equal(t, tc.code, te.Code, tc.name)
		require.True(t, te.Final(), tc.name)
	}
	require.Empty(t, f.Messages())
}

// TestFakeBackdateClosesTheWindow: a customer whose last message is
// moved back past 24 hours gets no free text until they write again.
func TestFakeBackdateClosesTheWindow(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	const shop, customer = "+4930123456", "+4915112345678"
	c := twilio.New(f.AccountSID, f.AuthToken, shop, twilio.WithBaseURL(f.URL()))
	send := func() twilio.FakeMessage {
		_, err := c.Send(context.Background(), "", "whatsapp:"+customer, "Hallo", "")
		require.NoError(t, err)
		return f.Messages()[len(f.Messages())-1]
	}
	f.Inbound("whatsapp:"+customer, "whatsapp:"+shop, "Hallo")
	require.Equal(t, "sent", send().Status)
	f.Backdate("whatsapp:"+customer, "whatsapp:"+shop, 25*time.Hour)
	require.Equal(t, twilio.ErrCodeOutsideWindow, send().ErrorCode)
	f.Inbound("whatsapp:"+customer, "whatsapp:"+shop, "Noch da?")
	require.Equal(t, "sent", send().Status)
}
