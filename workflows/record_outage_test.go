package workflows_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// outageTuning retries quickly, so that an outage the test ends on an
// effect is over in well under a second of backoff.
var outageTuning = workflows.Tuning{ActivityAttempts: 1, MaxRetryInterval: 200 * time.Millisecond,
	CompensationMaxInterval: 200 * time.Millisecond, ReconcileTimeout: time.Minute}

// newOutageStack is a record stack whose worker reaches one API (picked
// by which) through an outage proxy that goes down at the first request
// down matches (nil: not armed yet), after forwarding it, and refuses
// everything until the test lifts it.
func newOutageStack(t *testing.T, which func(*config.Config) *string, down func(*http.Request) bool) (recordStack, *testsupport.Outage) {
	t.Helper()
	var outage *testsupport.Outage
	tweaks := 0
	s := newRecordStack(t, func(c *config.Config) {
		if tweaks++; tweaks == 2 { // the worker's turn: the APIs run
			outage = testsupport.NewOutage(t, *which(c))
			if down != nil {
				outage.DownAt(down, true) // the request lands, its answer is lost
			}
			*which(c) = outage.URL
		}
	})
	return s, outage
}

// liftAfter ends the outage once it has refused n requests: the saga has
// then met it, and retried, n times.
func liftAfter(t *testing.T, o *testsupport.Outage, n int) {
	t.Helper()
	testsupport.Eventually(t, 60*time.Second, "the outage to refuse the saga's retries", func() bool { return o.Refused() >= n })
	o.Up()
}

// TestRecordHistoriesOutage records the sagas meeting an outage on the
// real stack: a hold whose answer was lost, settled by a lookup that asks
// until the calendar is back (versioned: hold-reconcile-outlasts-outage),
// a paid link whose read failed, read again after a pause (versioned:
// reread-payment-link), and a link the payment API refused to create,
// which leaves nothing to void (versioned: link-never-made). Runs with
// `make histories`.
func TestRecordHistoriesOutage(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	t.Run("hold-reconciled", func(t *testing.T) {
		s, outage := newOutageStack(t, func(c *config.Config) *string { return &c.CalendarURL },
			func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/v1/holds" })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req := recordRequest(t, "+4915112340013", time.Tuesday, 14)
		req.Tuning = outageTuning
		run, existing, err := appointment.Start(ctx, s.tc, s.queue, req)
		require.NoError(t, err)
		require.False(t, existing)
		liftAfter(t, outage, 4) // the hold and three lookups
		var st appointment.State
		require.NoError(t, run.Get(ctx, &st))
		require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
		require.Empty(t, st.ReviewCase)
		s.save(t, ctx, run.GetID(), "hold-reconciled.appointment.json")
	})
	t.Run("link-reread", func(t *testing.T) {
		s, outage := newOutageStack(t, func(c *config.Config) *string { return &c.PaymentsURL }, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req := recordRequest(t, "+4915112340014", time.Tuesday, 15)
		req.PaymentMethod, req.Channel = "", workflows.ChannelVoice // a caller gets the link by message
		req.Tuning = outageTuning
		run, existing, err := appointment.Start(ctx, s.tc, s.queue, req)
		require.NoError(t, err)
		require.False(t, existing)
		testsupport.Eventually(t, 60*time.Second, "the payment link in the outbox", func() bool {
			var n int
			err := s.pool.QueryRow(ctx, `SELECT count(*) FROM outbox_messages WHERE reference = $1 AND kind = 'payment_link'`, run.GetID()).Scan(&n)
			return err == nil && n == 1
		})
		outage.DownAt(func(r *http.Request) bool { // the read after the payment's event
			return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/checkout/sessions/")
		}, false)
		payByLink(t, ctx, s.tc, s.pool, run.GetID())
		liftAfter(t, outage, 3) // the read after the event and its rereads
		var st appointment.State
		require.NoError(t, run.Get(ctx, &st))
		require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
		s.save(t, ctx, run.GetID(), "link-reread.appointment.json")
		s.save(t, ctx, deposit.WorkflowID(run.GetID()), "link-reread.payment.json")
	})
	t.Run("link-never-made", func(t *testing.T) {
		tweaks := 0
		s := newRecordStack(t, func(c *config.Config) {
			if tweaks++; tweaks == 2 { // the worker's turn: the APIs run
				c.PaymentsURL = refuseLinkCreation(t, c.PaymentsURL)
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req := recordRequest(t, "+4915112340017", time.Tuesday, 16)
		req.PaymentMethod, req.Channel = "", workflows.ChannelVoice
		req.Tuning = outageTuning
		run, st := s.book(t, ctx, req)
		require.Equal(t, workflows.StatusPaymentFailed, st.Status, st.Reason)
		var told int
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM outbox_messages WHERE reference = $1 AND kind = 'payment_unavailable'`, run.GetID()).Scan(&told))
		require.Equal(t, 1, told, "the customer is told nothing was booked or charged")
		s.save(t, ctx, run.GetID(), "link-never-made.appointment.json")
		s.save(t, ctx, deposit.WorkflowID(run.GetID()), "link-never-made.payment.json")
	})
}

// refuseLinkCreation is a loopback proxy to the payment API that answers
// every Checkout Session create with Stripe's invalid_request_error (a
// final answer: no session exists) and forwards everything else.
func refuseLinkCreation(t *testing.T, upstream string) string {
	t.Helper()
	u, err := url.Parse(upstream)
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/checkout/sessions" {
			forward.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, werr := w.Write([]byte(`{"error":{"type":"invalid_request_error","param":"expires_at","message":"refused by the test"}}`))
		require.NoError(t, werr)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
