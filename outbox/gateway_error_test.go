package outbox_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/twilio"
)

// messagesPath is the Messages resource of every Twilio account.
const messagesPath = "/2010-04-01/Accounts/"

// proxied is the relay of e sending through a chaos proxy in front of the
// fake Twilio; exchanges returns every request the proxy forwarded.
func (e *env) proxied(rules ...chaos.Rule) (s *outbox.Sender, exchanges func() []chaos.Exchange) {
	e.t.Helper()
	var (
		mu  sync.Mutex
		all []chaos.Exchange
	)
	p, err := chaos.New(e.fake.URL(), rules, chaos.WithObserver(func(x chaos.Exchange) {
		mu.Lock()
		defer mu.Unlock()
		all = append(all, x)
	}))
	require.NoError(e.t, err)
	srv := httptest.NewServer(p)
	e.t.Cleanup(srv.Close)
	s = e.relay()
	s.Provider = twilio.New(e.fake.AccountSID, e.fake.AuthToken, from, twilio.WithBaseURL(srv.URL))
	return s, func() []chaos.Exchange {
		mu.Lock()
		defer mu.Unlock()
		return append([]chaos.Exchange(nil), all...)
	}
}

// count returns how many exchanges used method.
func count(xs []chaos.Exchange, method string) int {
	n := 0
	for _, x := range xs {
		if x.Method == method {
			n++
		}
	}
	return n
}

// TestMatrix16BareGatewayErrorIsNotResent proves failure-matrix item 16 (a
// bare 503 from a proxy after Twilio accepted the message is taken as
// "not created" and the message is sent again): the chaos proxy in front of
// the fake Twilio forwards the send, Twilio creates the message, and the
// proxy answers a bare 503 instead of Twilio's answer. The relay must
// treat that as an unknown outcome and reconcile by listing: exactly one
// message at the fake Twilio, and the row ends 'sent' with its SID.
func TestMatrix16BareGatewayErrorIsNotResent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s, exchanges := e.proxied(chaos.Rule{Method: http.MethodPost, PathPrefix: messagesPath,
		Fault: chaos.ErrorAfterCommit, Status: http.StatusServiceUnavailable, Probability: 1, Limit: 1})
	s.StatusPoll = -1 // the exchanges counted are the send's and its reconciliation's
	m := e.reserve("bk_1", "whatsapp", customer, "Ihr Termin am Dienstag um 14 Uhr ist bestätigt.")

	require.Equal(t, 0, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 1, "Twilio accepted the message behind the 503")
	require.Equal(t, chaos.ErrorAfterCommit, exchanges()[0].Fault)

	// Later runs, before and after the send timeout, never send it again:
	// past it, the relay lists the messages and finds it.
	e.advance(time.Second)
	require.Equal(t, 0, e.runOnce(s))
	e.advance(sendTimeout)
	require.Equal(t, 1, e.runOnce(s))
	e.advance(10 * sendTimeout)
	require.Equal(t, 0, e.runOnce(s))

	msgs := e.fake.Messages()
	require.Len(t, msgs, 1, "exactly one message at Twilio")
	got := e.row(m.ID)
	require.Equal(t, "sent", got.State)
	require.Equal(t, msgs[0].Sid, got.ProviderID, "the row names the message the lost answer created")
	require.Equal(t, 1, count(exchanges(), http.MethodPost), "one send")
	require.Equal(t, 1, count(exchanges(), http.MethodGet), "one listing")
}

// TestTwilioErrorBodyIsFinalWithoutListing: a real Twilio error document
// with a Twilio error code (21211, invalid 'To') proves the message does
// not exist; the row ends 'failed' at once and nothing is listed.
func TestTwilioErrorBodyIsFinalWithoutListing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s, exchanges := e.proxied()
	m := e.reserve("bk_1", "sms", "+123", "Bestätigung")

	require.Equal(t, 0, e.runOnce(s))
	e.advance(10 * sendTimeout)
	require.Equal(t, 0, e.runOnce(s))

	got := e.row(m.ID)
	require.Equal(t, "failed", got.State)
	require.Contains(t, got.LastError, "21211")
	require.Empty(t, e.fake.Messages())
	require.Equal(t, 1, count(exchanges(), http.MethodPost))
	require.Zero(t, count(exchanges(), http.MethodGet), "no listing: the error body is proof")
}

// TestAnswersThatProveNothingAreReconciled drives the relay through a
// gateway that answers in place of Twilio: every answer without a Twilio
// error code (a bare status, an HTML page, JSON without a code) leaves
// the outcome unknown, so the message is listed, never sent again; a
// Twilio error document with a code is believed.
func TestAnswersThatProveNothingAreReconciled(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		// created: the gateway forwarded the send and Twilio took it.
		created   bool
		wantState string
	}{
		{"bare 502 after commit", http.StatusBadGateway, "text/plain", "Bad Gateway\n", true, "sent"},
		{"bare 504 after commit", http.StatusGatewayTimeout, "", "", true, "sent"},
		{"HTML 503 after commit", http.StatusServiceUnavailable, "text/html", "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>", true, "sent"},
		{"JSON 503 without a code after commit", http.StatusServiceUnavailable, "application/json", `{"message":"no healthy upstream"}`, true, "sent"},
		// Unknown, then absent from Twilio's authoritative list: sent again.
		{"bare 429 from the gateway, nothing created", http.StatusTooManyRequests, "text/plain", "slow down", false, "sent"},
		{"Twilio 503 with code 20503, nothing created", http.StatusServiceUnavailable, "application/json",
			`{"code": 20503, "message": "Service Unavailable", "more_info": "https://www.twilio.com/docs/errors/20503", "status": 503}`, false, "sent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			upstream, err := chaos.New(e.fake.URL(), nil)
			require.NoError(t, err)
			var once sync.Once
			gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				intercept := false
				if r.Method == http.MethodPost {
					once.Do(func() { intercept = true })
				}
				if !intercept {
					upstream.ServeHTTP(w, r)
					return
				}
				if tc.created {
					upstream.ServeHTTP(httptest.NewRecorder(), r)
				} else {
					_, _ = io.Copy(io.Discard, r.Body)
				}
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			t.Cleanup(gw.Close)
			s := e.relay()
			s.Provider = twilio.New(e.fake.AccountSID, e.fake.AuthToken, from, twilio.WithBaseURL(gw.URL))
			s.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
			m := e.reserve("bk_1", "whatsapp", customer, "Bestätigung")

			for range 3 {
				_, err := s.RunOnce(context.Background())
				require.NoError(t, err)
				e.advance(sendTimeout + time.Second)
			}
			require.Equal(t, tc.wantState, e.row(m.ID).State)
			msgs := e.fake.Messages()
			if tc.wantState == "review" {
				require.Empty(t, msgs, "unknown and not found: a person decides, nothing is re-sent")
				return
			}
			require.Len(t, msgs, 1, "exactly one message at Twilio")
			require.Equal(t, msgs[0].Sid, e.row(m.ID).ProviderID)
		})
	}
}
