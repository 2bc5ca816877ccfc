package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// ---- item 3: webhook ingest -------------------------------------------

// Variant names of item 3; the report finds series by them.
const (
	ingestGateway    = "gateway: signed webhook, new event (inbox insert, SignalWithStart, mark delivered)"
	ingestRaw        = "raw SignalWithStart, same server, same workflow ID scheme"
	ingestRedelivery = "gateway: the same signed webhook again (redelivery)"
)

// ingestEnv is the gateway as internal/stack builds it, on a task queue
// that no worker polls: both variants only signal (and start)
// conversation workflows, so they do the same work on the server.
type ingestEnv struct {
	cfg  config.Config
	pool *pgxpool.Pool
	tc   client.Client
	gw   *channels.Gateway
	sim  twilio.Simulator
	// base makes customers and SIDs unique on the shared Temporal server.
	base int
}

func newIngestEnv(t *testing.T) ingestEnv {
	e := newEnv(t)
	tc := temporaltest.Temporal(t)
	cfg := e.cfg
	cfg.TaskQueue = testsupport.TaskQueue(t) // nobody polls it
	// Logs are formatted as in production and then dropped: their cost
	// counts, their volume does not flood the benchmark's output.
	gw, _ := stack.Gateway(cfg, e.pool, tc, testsupport.Tenants(t, e.pool), stack.Logger(cfg, io.Discard))
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return ingestEnv{cfg: cfg, pool: e.pool, tc: tc, gw: gw, base: rand.IntN(30_000_000),
		sim: twilio.Simulator{GatewayURL: srv.URL, PublicBaseURL: cfg.PublicBaseURL, AuthToken: cfg.TwilioAuthToken, HTTP: newClient()}}
}

// phone is the seq-th customer of a run: a valid German mobile number.
func phone(base, seq int) string { return fmt.Sprintf("+49151%08d", (base+seq)%100_000_000) }

// sid is the seq-th Twilio MessageSid.
func sid(base, seq int) string { return fmt.Sprintf("SMbench%025d", base*1000+seq) }

const ingestText = "Reifenwechsel am 1.12. um 14 Uhr"

// webhookOp posts the signed WhatsApp webhook of event seq (a new customer
// each) and expects 200; the request ends when the gateway has recorded
// and handed on the event.
func (e ingestEnv) webhookOp() Op {
	return func(ctx context.Context, seq int) error {
		return e.postEvent(ctx, seq)
	}
}

func (e ingestEnv) postEvent(ctx context.Context, seq int) error {
	form := twilio.WhatsApp(sid(e.base, seq), phone(e.base, seq), ingestText)
	return postWebhook(ctx, e.sim, form)
}

func postWebhook(ctx context.Context, sim twilio.Simulator, form url.Values) error {
	status, body, err := sim.Post(ctx, channels.RouteWhatsApp, form)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("webhook: status %d: %s", status, body)
	}
	return nil
}

// redeliveryOp posts again the webhook of one of the n events from first on.
func (e ingestEnv) redeliveryOp(first, n int) Op {
	return func(ctx context.Context, seq int) error {
		return e.postEvent(ctx, first+seq%n)
	}
}

// rawOp signals (and starts) the conversation of event seq directly, with
// the arguments the gateway's deliver uses.
func (e ingestEnv) rawOp() Op {
	return func(ctx context.Context, seq int) error {
		customer := phone(e.base, seq)
		key, err := e.cfg.CustomerKeys().Key(config.DefaultTenant, customer)
		if err != nil {
			return err
		}
		id := conversation.WorkflowID(config.DefaultTenant, key)
		ev := conversation.InboundEvent{EventID: sid(e.base, seq), Channel: workflows.ChannelWhatsApp, Text: ingestText, ReceivedAt: time.Now().UTC()}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err = e.tc.SignalWithStartWorkflow(ctx, id, conversation.SignalInbound, ev, client.StartWorkflowOptions{
			ID: id, TaskQueue: e.cfg.TaskQueue, StaticSummary: "Conversation with " + mask.Phones(customer),
		}, conversation.WorkflowName, conversation.Input{
			Tenant: config.DefaultTenant, Customer: customer, CustomerKey: key, DepositAmount: 2000,
			Currency: "eur", PaymentMethod: stack.ConversationCard, Timezone: e.cfg.Timezone.String(),
		})
		return err
	}
}

type ingestResult struct {
	series  []*series
	profile map[string]string
}

// measureIngest interleaves, per concurrency and repetition: new events
// through the gateway, the same count of raw SignalWithStart calls, and
// redeliveries of the events the gateway run just accepted.
func measureIngest(t *testing.T, sz sizes) ingestResult {
	e := newIngestEnv(t)
	res := ingestResult{profile: map[string]string{}}
	seq, accepted, redelivered := 0, 0, 0
	raw := map[int]bool{} // first seq of each raw run, to check its effect
	for _, c := range sz.concs {
		gw, rw, rd := &series{variant: ingestGateway, conc: c}, &series{variant: ingestRaw, conc: c}, &series{variant: ingestRedelivery, conc: c}
		for range sz.reps {
			l := sz.load(c)
			l.SeqBase = seq
			r := measure(t, gw, l, e.webhookOp())
			first, n := seq, r.Ops
			seq += r.Ops
			accepted += r.Ops

			l.SeqBase = seq
			r = measure(t, rw, l, e.rawOp())
			raw[seq] = true
			seq += r.Ops

			l.SeqBase = 0
			redelivered += measure(t, rd, l, e.redeliveryOp(first, n)).Ops
		}
		res.series = append(res.series, gw, rw, rd)
	}
	// Effects: one inbox row per new event, every one handed on; every
	// redelivery blocked at the inbox; the workflows exist with the signal.
	require.Equal(t, accepted, countRows(t, e.pool, `SELECT count(*) FROM inbox_events WHERE state = 'delivered'`))
	require.Equal(t, accepted, countRows(t, e.pool, `SELECT count(*) FROM inbox_events`))
	require.Equal(t, float64(redelivered), testutil.ToFloat64(e.gw.Metrics.DuplicatesBlocked().WithLabelValues("inbox", config.DefaultTenant, channels.RouteWhatsApp)))
	for first := range raw {
		requireSignalled(t, e.tc, testsupport.ConversationID(t, config.DefaultTenant, phone(e.base, first)))
	}
	requireSignalled(t, e.tc, testsupport.ConversationID(t, config.DefaultTenant, phone(e.base, 0)))

	c := sz.concs[len(sz.concs)-1]
	l := sz.load(c)
	l.SeqBase = seq
	if p := profiled(t, sz.profile, "ingest-gateway", l, e.webhookOp()); p != "" {
		res.profile[fmt.Sprintf("gateway, new events, c=%d", c)] = p
	}
	if p := profiled(t, sz.profile, "ingest-redelivery", sz.load(c), e.redeliveryOp(0, accepted)); p != "" {
		res.profile[fmt.Sprintf("gateway, redeliveries, c=%d", c)] = p
	}
	return res
}

// requireSignalled checks that a conversation exists and got its signal.
func requireSignalled(t *testing.T, tc client.Client, id string) {
	d, err := tc.DescribeWorkflowExecution(context.Background(), id, "")
	require.NoError(t, err, id)
	require.GreaterOrEqual(t, d.GetWorkflowExecutionInfo().GetHistoryLength(), int64(3), "%s: started, signalled, task scheduled", id)
}
