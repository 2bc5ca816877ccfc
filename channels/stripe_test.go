package channels_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// TestStripeWebhookVerifiesBeforeRecording: a verified event is recorded
// and signalled to its payment workflow; a wrong signature, a stale
// timestamp, a missing header or a body that is no event is refused with
// 400 and leaves no inbox row.
func TestStripeWebhookVerifiesBeforeRecording(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	now := time.Now()
	cases := []struct {
		name   string
		body   func(id, ref string) []byte
		sign   func(body []byte) string
		status int
		// delivered: a row, delivered, and the event reached the workflow.
		delivered bool
	}{
		{"valid", func(id, ref string) []byte { return stripeEvent(id, deposit.EventCheckoutCompleted, ref) },
			func(b []byte) string { return signed(b, testWebhookSecret, now) }, http.StatusOK, true},
		{"other secret", func(id, ref string) []byte { return stripeEvent(id, deposit.EventCheckoutCompleted, ref) },
			func(b []byte) string { return signed(b, "whsec_someone_else", now) }, http.StatusBadRequest, false},
		{"stale timestamp", func(id, ref string) []byte { return stripeEvent(id, deposit.EventCheckoutCompleted, ref) },
			func(b []byte) string { return signed(b, testWebhookSecret, now.Add(-301*time.Second)) }, http.StatusBadRequest, false},
		{"no signature", func(id, ref string) []byte { return stripeEvent(id, deposit.EventCheckoutCompleted, ref) },
			func([]byte) string { return "" }, http.StatusBadRequest, false},
		{"tampered body", func(id, ref string) []byte { return stripeEvent(id, deposit.EventCheckoutCompleted, ref) },
			func(b []byte) string {
				return signed([]byte(strings.Replace(string(b), "test", "tost", 1)), testWebhookSecret, now)
			}, http.StatusBadRequest, false},
		{"malformed JSON", func(id, ref string) []byte { return []byte(`{"id":"` + id + `","object":"event",`) },
			func(b []byte) string { return signed(b, testWebhookSecret, now) }, http.StatusBadRequest, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, ref := fmt.Sprintf("evt_%d", rand.Int64()), newReference()
			e.startRecorder(t, ref)
			body := tc.body(id, ref)
			status, answer := e.post(t, body, tc.sign(body))
			require.Equal(t, tc.status, status, answer)
			require.Contains(t, answer, "{", "a JSON answer")
			if !tc.delivered {
				require.Zero(t, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = $1`, id), "nothing stored")
				return
			}
			require.Equal(t, "delivered", e.state(t, id))
			got := e.receivedN(t, ref, 1)
			require.Len(t, got, 1)
			require.Equal(t, deposit.Event{EventID: id, Type: deposit.EventCheckoutCompleted,
				SessionID: "cs_test_" + id, IntentID: "pi_" + id, Created: got[0].Created}, got[0])
			require.WithinDuration(t, now, got[0].Created, time.Minute)
		})
	}
}

// TestStripeWebhookConcurrentRedeliveryIsOneSignal: the same event
// delivered three times at once leaves one inbox row and one signal; the
// other two are answered 200 and counted as duplicates blocked at the
// inbox.
func TestStripeWebhookConcurrentRedeliveryIsOneSignal(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	id, ref := fmt.Sprintf("evt_%d", rand.Int64()), newReference()
	e.startRecorder(t, ref)
	body := stripeEvent(id, deposit.EventIntentCapturable, ref)
	sig := signed(body, testWebhookSecret, time.Now())
	var wg sync.WaitGroup
	statuses := make([]int, 3)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = e.post(t, body, sig)
		}()
	}
	wg.Wait()
	require.Equal(t, []int{200, 200, 200}, statuses)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE provider = 'stripe' AND event_id = $1`, id))
	require.Equal(t, "delivered", e.state(t, id))
	require.EqualValues(t, 1, e.signals.sent.Load(), "one signal")
	got := e.receivedN(t, ref, 1)
	require.Len(t, got, 1)
	require.Equal(t, "pi_"+id, got[0].IntentID)
	require.Equal(t, 2.0, testutil.ToFloat64(e.gw.Metrics.DuplicatesBlocked().WithLabelValues("inbox", "demo", channels.RouteStripe)))
}

// TestStripeWebhookUnknownReferenceIsUnmatched: an event whose payment
// workflow never existed is answered 200 (the provider must not retry it
// forever), kept as unmatched, counted, and listed on the ops page.
func TestStripeWebhookUnknownReferenceIsUnmatched(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	id, ref := fmt.Sprintf("evt_%d", rand.Int64()), newReference() // no recorder: nobody waits
	body := stripeEvent(id, deposit.EventCheckoutCompleted, ref)
	status, _ := e.post(t, body, signed(body, testWebhookSecret, time.Now()))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "unmatched", e.state(t, id))
	require.Equal(t, 1.0, testutil.ToFloat64(e.gw.Metrics.PaymentWebhooksUnmatched().WithLabelValues(deposit.EventCheckoutCompleted)))

	req, err := http.NewRequest(http.MethodGet, e.admin+"/ops", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+config.DefaultAPIToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	html, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(html), `id="unmatched-`+id+`"`, "the ops page lists the unmatched event")
	require.Contains(t, string(html), ref)
	require.Contains(t, string(html), deposit.EventCheckoutCompleted)
}

// TestStripeWebhookWithoutReferenceIsRecordedOnly: an event that names no
// booking (a refund's charge) is recorded as delivered, nothing signalled.
func TestStripeWebhookWithoutReferenceIsRecordedOnly(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	id := fmt.Sprintf("evt_%d", rand.Int64())
	body := stripeEvent(id, "charge.refunded", "")
	status, _ := e.post(t, body, signed(body, testWebhookSecret, time.Now()))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "delivered", e.state(t, id))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = $1 AND tenant_id = '-' AND kind = 'charge.refunded' AND customer = ''`, id))
	require.Zero(t, e.signals.sent.Load())
}

// TestStripeWebhookAfterTheSagaEndedIsLateNotUnmatched: the second of
// two hints about one payment reaches a payment workflow that has ended;
// it is delivered as late, not shown to a person as unmatched.
func TestStripeWebhookAfterTheSagaEndedIsLateNotUnmatched(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	ctx := context.Background()
	id, ref := fmt.Sprintf("evt_%d", rand.Int64()), newReference()
	e.startRecorder(t, ref)
	require.NoError(t, e.tc.TerminateWorkflow(ctx, deposit.WorkflowID(ref), "", "the saga ended"))
	body := stripeEvent(id, deposit.EventIntentCapturable, ref)
	status, _ := e.post(t, body, signed(body, testWebhookSecret, time.Now()))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "delivered", e.state(t, id))
	require.Zero(t, testutil.ToFloat64(e.gw.Metrics.PaymentWebhooksUnmatched().WithLabelValues(deposit.EventIntentCapturable)))
}

// TestStripeWebhookOfACardDepositIsAnEcho: a card deposit is its
// appointment's own steps, with no payment workflow; the authorisation's
// event names the appointment, which runs, so it is delivered as an echo,
// not shown to a person as unmatched.
func TestStripeWebhookOfACardDepositIsAnEcho(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	ctx := context.Background()
	ref := newReference()
	// The recorder stands in for the appointment, under its ID.
	_, err := e.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: ref, TaskQueue: e.queue}, paymentRecorder)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.tc.TerminateWorkflow(context.Background(), ref, "", "test over") })
	id := fmt.Sprintf("evt_%d", rand.Int64())
	body := stripeEvent(id, deposit.EventIntentCapturable, ref)
	status, _ := e.post(t, body, signed(body, testWebhookSecret, time.Now()))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "delivered", e.state(t, id))
	require.Zero(t, testutil.ToFloat64(e.gw.Metrics.PaymentWebhooksUnmatched().WithLabelValues(deposit.EventIntentCapturable)))
}

// TestStripeWebhookEchoesAreRecordedNotSignalled: the events the saga has
// no use for (its own capture's, a declined attempt's) are recorded and
// answered, and signal nothing.
func TestStripeWebhookEchoesAreRecordedNotSignalled(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	ref := newReference()
	e.startRecorder(t, ref)
	for _, typ := range []string{deposit.EventIntentSucceeded, deposit.EventIntentFailed, deposit.EventIntentCanceled} {
		id := fmt.Sprintf("evt_%d", rand.Int64())
		body := stripeEvent(id, typ, ref)
		status, _ := e.post(t, body, signed(body, testWebhookSecret, time.Now()))
		require.Equal(t, http.StatusOK, status, typ)
		require.Equal(t, "delivered", e.state(t, id), typ)
	}
	require.Zero(t, e.signals.sent.Load())
}

// TestStripeWebhookTemporalDownIsRelayed: with Temporal unreachable the
// event is accepted and stays pending; the relay signals it later, and an
// event whose workflow is gone by then becomes unmatched.
func TestStripeWebhookTemporalDownIsRelayed(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	ctx := context.Background()
	down, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	require.NoError(t, err)
	broken := *e.gw
	broken.Temporal = down
	srv := httptest.NewServer(broken.Handler())
	defer srv.Close()
	brokenEnv := *e
	brokenEnv.url = srv.URL

	id, ref := fmt.Sprintf("evt_%d", rand.Int64()), newReference()
	e.startRecorder(t, ref)
	gone := fmt.Sprintf("evt_%d", rand.Int64())
	for _, ev := range [][]byte{stripeEvent(id, deposit.EventCheckoutCompleted, ref), stripeEvent(gone, deposit.EventCheckoutExpired, newReference())} {
		status, _ := brokenEnv.post(t, ev, signed(ev, testWebhookSecret, time.Now()))
		require.Equal(t, http.StatusOK, status, "accepted: nothing accepted is lost")
	}
	require.Equal(t, "pending", e.state(t, id))
	require.Equal(t, "pending", e.state(t, gone))
	require.Empty(t, e.received(t, ref))

	n, err := e.gw.RelayPending(ctx, -time.Second)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, "delivered", e.state(t, id))
	require.Equal(t, "unmatched", e.state(t, gone))
	require.Len(t, e.receivedN(t, ref, 1), 1)
	require.Equal(t, 1.0, testutil.ToFloat64(e.gw.Metrics.PaymentWebhooksUnmatched().WithLabelValues(deposit.EventCheckoutExpired)))
	n, err = e.gw.RelayPending(ctx, -time.Second)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to relay")
}

// TestStripeWebhookWithoutSecretIsRefused: a gateway without a webhook
// secret accepts no payment webhook at all, signed or not.
func TestStripeWebhookWithoutSecretIsRefused(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	unconfigured := *e.gw
	unconfigured.StripeWebhookSecret = ""
	srv := httptest.NewServer(unconfigured.Handler())
	defer srv.Close()
	e.url = srv.URL
	id := fmt.Sprintf("evt_%d", rand.Int64())
	body := stripeEvent(id, deposit.EventCheckoutCompleted, newReference())
	status, _ := e.post(t, body, signed(body, "", time.Now()))
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Zero(t, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = $1`, id))
}

// TestPaidPageSpeaksTheCustomersLanguage: the success_url page thanks in
// German or English by Accept-Language, German by default.
func TestPaidPageSpeaksTheCustomersLanguage(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	for _, tc := range []struct{ accept, want string }{
		{"", "Danke, Ihre Anzahlung ist eingegangen – die Bestätigung kommt per Nachricht."},
		{"de-DE,de;q=0.9,en;q=0.8", "Danke, Ihre Anzahlung ist eingegangen"},
		{"en-GB,en;q=0.9", "Thank you, your deposit has been received"},
		{"fr-FR,en;q=0.5,de;q=0.4", "Thank you"},
		{"fr-FR", "Danke"},
	} {
		req, err := http.NewRequest(http.MethodGet, e.url+channels.RoutePaid+"?session=cs_test_x", nil)
		require.NoError(t, err)
		if tc.accept != "" {
			req.Header.Set("Accept-Language", tc.accept)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Contains(t, string(body), tc.want, tc.accept)
		require.NotContains(t, string(body), "cs_test_x", "the session ID is not echoed")
	}
}
