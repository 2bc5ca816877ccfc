package channels_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84/webhook"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// testWebhookSecret signs the payment webhooks of these tests.
const testWebhookSecret = "whsec_channels_test_secret"

// paymentSignals is the gateway's Temporal client: it forwards every call
// and counts the payment-event signals sent, the gateway's one effect.
type paymentSignals struct {
	client.Client
	sent atomic.Int64
}

func (s *paymentSignals) SignalWorkflow(ctx context.Context, id, runID, name string, arg any) error {
	if name == deposit.SignalEvent {
		s.sent.Add(1)
	}
	return s.Client.SignalWorkflow(ctx, id, runID, name, arg)
}

// stripeEnv is a gateway on loopback with a webhook secret, over its own
// database and the package's Temporal server, with a worker that runs
// paymentRecorder.
type stripeEnv struct {
	pool    *pgxpool.Pool
	tc      client.Client
	queue   string
	gw      *channels.Gateway
	reg     *prometheus.Registry
	signals *paymentSignals
	url     string
	admin   string // the admin listener (ops page)
}

// newStripeEnv builds the env; each setup may add tenants to pool and
// change cfg before the gateway is built from them.
func newStripeEnv(t *testing.T, setup ...func(*config.Config, *pgxpool.Pool)) *stripeEnv {
	t.Helper()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.TwilioAuthToken = authToken
	cfg.StripeWebhookSecret = testWebhookSecret
	cfg.TaskQueue = testsupport.TaskQueue(t)
	for _, s := range setup {
		s(&cfg, pool)
	}
	tc := temporaltest.Temporal(t)
	testsupport.Worker(t, tc, cfg.TaskQueue, func(r worker.Registry) { r.RegisterWorkflow(paymentRecorder) })
	sig := &paymentSignals{Client: tc}
	gw, reg := stack.Gateway(cfg, pool, sig, testsupport.Tenants(t, pool), stack.Logger(cfg, testLog{t}))
	srv, admin := serveGateway(t, gw)
	return &stripeEnv{pool: pool, tc: tc, queue: cfg.TaskQueue, gw: gw, reg: reg, signals: sig, url: srv.URL, admin: admin.URL}
}

// queryEvents is paymentRecorder's query of the events it received.
const queryEvents = "events"

// paymentRecorder stands in for the payment saga: it records every
// payment event signalled to it.
func paymentRecorder(ctx workflow.Context) error {
	var got []deposit.Event
	if err := workflow.SetQueryHandler(ctx, queryEvents, func() ([]deposit.Event, error) { return got, nil }); err != nil {
		return err
	}
	ch := workflow.GetSignalChannel(ctx, deposit.SignalEvent)
	for {
		var ev deposit.Event
		ch.Receive(ctx, &ev)
		got = append(got, ev)
	}
}

// newReference is a fresh appointment workflow ID of the demo tenant,
// in letters only (no digit run the masker would take for a number).
func newReference() string { return referenceOf("demo") }

// referenceOf is a fresh appointment workflow ID of tenant.
func referenceOf(tenant string) string {
	b := make([]byte, 12)
	for i := range b {
		b[i] = byte('a' + rand.IntN(26))
	}
	return "appointment:" + tenant + ":test-" + string(b)
}

// startRecorder runs paymentRecorder as the payment workflow of ref.
func (e *stripeEnv) startRecorder(t *testing.T, ref string) {
	t.Helper()
	ctx := context.Background()
	_, err := e.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: deposit.WorkflowID(ref), TaskQueue: e.queue}, paymentRecorder)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = e.tc.TerminateWorkflow(context.Background(), deposit.WorkflowID(ref), "", "test over")
	})
}

// receivedN waits until the payment workflow of ref has processed n
// events (a query reads the state of the last completed workflow task,
// which may not include a signal just accepted) and returns them.
func (e *stripeEnv) receivedN(t *testing.T, ref string, n int) []deposit.Event {
	t.Helper()
	var got []deposit.Event
	testsupport.Eventually(t, 30*time.Second, "the payment workflow to process its events", func() bool {
		got = e.received(t, ref)
		return len(got) >= n
	})
	return got
}

// received is what the payment workflow of ref has received.
func (e *stripeEnv) received(t *testing.T, ref string) []deposit.Event {
	t.Helper()
	v, err := e.tc.QueryWorkflow(context.Background(), deposit.WorkflowID(ref), "", queryEvents)
	require.NoError(t, err)
	var got []deposit.Event
	require.NoError(t, v.Get(&got))
	return got
}

func (e *stripeEnv) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func (e *stripeEnv) state(t *testing.T, eventID string) string {
	t.Helper()
	var s string
	require.NoError(t, e.pool.QueryRow(context.Background(),
		`SELECT state FROM inbox_events WHERE provider = 'stripe' AND event_id = $1`, eventID).Scan(&s))
	return s
}

// stripeEvent is an event as Stripe sends it, about a Checkout Session
// (or, for payment_intent.* types, a PaymentIntent) carrying ref.
func stripeEvent(id, typ, ref string) []byte {
	obj := map[string]any{"id": "cs_test_" + id, "object": "checkout.session", "client_reference_id": ref,
		"metadata": map[string]string{"booking_reference": ref}, "payment_intent": "pi_" + id}
	switch {
	case len(typ) > 15 && typ[:15] == "payment_intent.":
		obj = map[string]any{"id": "pi_" + id, "object": "payment_intent", "metadata": map[string]string{"booking_reference": ref}}
	case typ == "charge.refunded":
		obj = map[string]any{"id": "ch_" + id, "object": "charge", "metadata": map[string]string{}}
	}
	return eventOf(id, typ, obj)
}

// eventOf is the event id of type typ about obj (its data.object).
func eventOf(id, typ string, obj map[string]any) []byte {
	b, err := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "created": time.Now().Unix(),
		"api_version": "2025-09-30.clover", "livemode": false, "data": map[string]any{"object": obj}})
	if err != nil {
		panic(err)
	}
	return b
}

// signed is the Stripe-Signature header of body at t with secret.
func signed(body []byte, secret string, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at}).Header
}

// post delivers a payment webhook and returns the status and body.
func (e *stripeEnv) post(t *testing.T, body []byte, signature string) (int, string) {
	t.Helper()
	return e.postTo(t, channels.RouteStripe, body, signature)
}

// postTo delivers a payment webhook to path.
func (e *stripeEnv) postTo(t *testing.T, path string, body []byte, signature string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if signature != "" {
		req.Header.Set("Stripe-Signature", signature)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}
