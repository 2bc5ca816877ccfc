package twilio_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/twilio"
)

const sender = "+4930123456"

func client(f *twilio.FakeServer, opts ...twilio.Option) *twilio.Client {
	return twilio.New(f.AccountSID, f.AuthToken, sender, append([]twilio.Option{twilio.WithBaseURL(f.URL())}, opts...)...)
}

func outcome(t *testing.T, err error) twilio.Outcome {
	t.Helper()
	var te *twilio.Error
	require.ErrorAs(t, err, &te)
	return te.Outcome
}

func TestSendSMSAndWhatsApp(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	c := client(f)
	ctx := context.Background()

	sid, err := c.Send(ctx, "", "+4915112345678", "Termin bestätigt", "https://bookonce.example/webhooks/twilio/status?outbox_id=msg_a")
	require.NoError(t, err)
	require.Regexp(t, `^SM[0-9a-f]{32}$`, sid)

	wa, err := c.Send(ctx, "", "whatsapp:+4915112345678", "Termin bestätigt (WA)", "")
	require.NoError(t, err)

	msgs := f.Messages()
	require.Len(t, msgs, 2)
	require.Equal(t, twilio.FakeMessage{Sid: sid, AccountSid: f.AccountSID, To: "+4915112345678", From: sender,
		Body: "Termin bestätigt", StatusCallback: "https://bookonce.example/webhooks/twilio/status?outbox_id=msg_a",
		Status: "sent", DateCreated: msgs[0].DateCreated, DateSent: msgs[0].DateSent}, msgs[0])
	require.Equal(t, wa, msgs[1].Sid)
	require.Equal(t, "whatsapp:+4915112345678", msgs[1].To)
	require.Equal(t, "whatsapp:"+sender, msgs[1].From)
	require.Empty(t, msgs[1].StatusCallback)
}

func TestSendClassifiesFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("invalid number is final", func(t *testing.T) {
		f := newFake(t)
		_, err := client(f).Send(ctx, "", "+123", "x", "")
		var te *twilio.Error
		require.ErrorAs(t, err, &te)
		require.Equal(t, twilio.Final, te.Outcome)
		require.Equal(t, 400, te.Status)
		require.Equal(t, 21211, te.Code)
		require.True(t, te.Final())
		require.Empty(t, f.Messages())
	})
	for status, want := range map[int]twilio.Outcome{
		http.StatusTooManyRequests:     twilio.Retryable,
		http.StatusServiceUnavailable:  twilio.Retryable,
		http.StatusInternalServerError: twilio.Unknown,
		http.StatusBadGateway:          twilio.Unknown,
		http.StatusBadRequest:          twilio.Final,
	} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			f := newFake(t)
			f.FailNext(status)
			_, err := client(f).Send(ctx, "", "+4915112345678", "x", "")
			require.Equal(t, want, outcome(t, err))
			require.Empty(t, f.Messages())
		})
	}
	t.Run("wrong credentials are retryable", func(t *testing.T) {
		f := newFake(t)
		_, err := twilio.New(f.AccountSID, "0000000000000000000000000000000f", sender, twilio.WithBaseURL(f.URL())).
			Send(ctx, "", "+4915112345678", "x", "")
		var te *twilio.Error
		require.ErrorAs(t, err, &te)
		require.Equal(t, twilio.Retryable, te.Outcome)
		require.Equal(t, 20003, te.Code)
	})
	t.Run("lost response is unknown", func(t *testing.T) {
		f := newFake(t)
		f.DropNextResponse()
		_, err := client(f).Send(ctx, "", "+4915112345678", "x", "")
		require.Equal(t, twilio.Unknown, outcome(t, err))
		require.True(t, errors.As(err, new(interface{ UnknownOutcome() bool })))
		require.Len(t, f.Messages(), 1)
	})
	t.Run("timeout after the request is unknown", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(slow.Close)
		t.Cleanup(func() { close(release) })
		_, err := twilio.New("AC1", "tok", sender, twilio.WithBaseURL(slow.URL), twilio.WithTimeout(200*time.Millisecond)).
			Send(ctx, "", "+4915112345678", "x", "")
		require.Equal(t, twilio.Unknown, outcome(t, err))
	})
	t.Run("no connection is retryable", func(t *testing.T) {
		f := twilio.NewFakeServer()
		f.Close()
		_, err := client(f).Send(ctx, "", "+4915112345678", "x", "")
		require.Equal(t, twilio.Retryable, outcome(t, err))
	})
	t.Run("cancelled before sending is retryable", func(t *testing.T) {
		f := newFake(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := client(f).Send(cctx, "", "+4915112345678", "x", "")
		require.Equal(t, twilio.Retryable, outcome(t, err))
		require.Empty(t, f.Messages())
	})
}

func TestFindSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFake(t)
	c := client(f, twilio.WithClockSkew(time.Minute))
	t0 := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	clock := t0.Add(-time.Hour)
	f.SetNow(func() time.Time { return clock })

	// The same text to the same number an hour before the reservation:
	// another message, not ours.
	_, err := c.Send(ctx, "", "whatsapp:+4915112345678", "Termin bestätigt", "")
	require.NoError(t, err)
	got, err := c.FindSent(ctx, "", "whatsapp:+4915112345678", "Termin bestätigt", t0)
	require.NoError(t, err)
	require.Empty(t, got)

	clock = t0.Add(30 * time.Second)
	sid, err := c.Send(ctx, "", "whatsapp:+4915112345678", "Termin bestätigt", "")
	require.NoError(t, err)
	clock = t0.Add(time.Minute)
	_, err = c.Send(ctx, "", "whatsapp:+4915112345678", "Anderer Text", "")
	require.NoError(t, err)
	_, err = c.Send(ctx, "", "+4915112345678", "Termin bestätigt", "") // SMS, not WhatsApp
	require.NoError(t, err)

	clock = t0.Add(2 * time.Minute)
	again, err := c.Send(ctx, "", "whatsapp:+4915112345678", "Termin bestätigt", "")
	require.NoError(t, err)

	got, err = c.FindSent(ctx, "", "whatsapp:+4915112345678", "Termin bestätigt", t0)
	require.NoError(t, err)
	require.Equal(t, []string{sid, again}, got, "every match, earliest first")

	got, err = c.FindSent(ctx, "", "whatsapp:+4915199999999", "Termin bestätigt", t0)
	require.NoError(t, err)
	require.Empty(t, got)

	f.FailNext(http.StatusServiceUnavailable)
	got, err = c.FindSent(ctx, "", "whatsapp:+4915112345678", "Termin bestätigt", t0)
	require.Error(t, err)
	require.Empty(t, got)
}

// TestOnlyATwilioErrorDocumentProvesAbsence: an error answer proves the
// message does not exist only when it is Twilio's error document with a
// Twilio error code; a proxy's or load balancer's answer (a bare status,
// an HTML page, JSON without a code) may follow Twilio's acceptance and
// is an unknown outcome, whatever its status.
func TestOnlyATwilioErrorDocumentProvesAbsence(t *testing.T) {
	t.Parallel()
	twilioDoc := func(status, code int) string {
		return fmt.Sprintf(`{"code": %d, "message": "m", "more_info": "https://www.twilio.com/docs/errors/%d", "status": %d}`, code, code, status)
	}
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		want        twilio.Outcome
		code        int
	}{
		{"bare 503", http.StatusServiceUnavailable, "text/plain", "Service Unavailable", twilio.Unknown, 0},
		{"bare 502 without a body", http.StatusBadGateway, "", "", twilio.Unknown, 0},
		{"HTML 504", http.StatusGatewayTimeout, "text/html", "<html><body>Gateway Timeout</body></html>", twilio.Unknown, 0},
		{"JSON 503 without a code", http.StatusServiceUnavailable, "application/json", `{"message":"no healthy upstream"}`, twilio.Unknown, 0},
		{"bare 429", http.StatusTooManyRequests, "text/plain", "slow down", twilio.Unknown, 0},
		{"bare 400", http.StatusBadRequest, "text/html", "<h1>Bad Request</h1>", twilio.Unknown, 0},
		{"Twilio 503 20503", http.StatusServiceUnavailable, "application/json", twilioDoc(503, 20503), twilio.Retryable, 20503},
		{"Twilio 429 20429", http.StatusTooManyRequests, "application/json", twilioDoc(429, 20429), twilio.Retryable, 20429},
		{"Twilio 400 21211", http.StatusBadRequest, "application/json", twilioDoc(400, 21211), twilio.Final, 21211},
		{"Twilio 500 20500", http.StatusInternalServerError, "application/json", twilioDoc(500, 20500), twilio.Unknown, 20500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			_, err := twilio.New("AC1", "tok", sender, twilio.WithBaseURL(srv.URL)).Send(context.Background(), "", "+4915112345678", "x", "")
			var te *twilio.Error
			require.ErrorAs(t, err, &te)
			require.Equal(t, tc.want, te.Outcome, "%v", err)
			require.Equal(t, tc.want, te.Class())
			require.Equal(t, tc.status, te.Status)
			if tc.code != 0 {
				require.Equal(t, tc.code, te.Code)
			}
		})
	}
}
