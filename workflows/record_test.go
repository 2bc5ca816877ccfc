package workflows_test

// TestRecordHistories records the histories the replay tests use, from real
// runs: a fresh PostgreSQL database, the real calendar and payment APIs on
// loopback, the in-process Temporal server and a real worker. It runs only
// when asked (`make histories`):
//
//	BOOKONCE_RECORD_HISTORIES=1 go test -count=1 -run TestRecordHistories ./workflows/

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
)

const recordHistoriesEnv = "BOOKONCE_RECORD_HISTORIES"

// recordStack is one recording's real stack with a worker on its own queue.
type recordStack struct {
	pool  *pgxpool.Pool
	tc    client.Client
	queue string
	// calendarURL is the calendar API the worker uses (the front desk too).
	calendarURL string
}

func newRecordStack(t *testing.T, tweak func(*config.Config), interceptors ...interceptor.WorkerInterceptor) recordStack {
	t.Helper()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	if tweak != nil {
		tweak(&cfg) // settings of the APIs (e.g. HOLD_TTL) ...
	}
	cfg.CalendarURL = stacktest.CalendarAPI(t, cfg, pool).URL
	cfg.PaymentsURL = stacktest.PaymentsAPI(t, cfg, pool).URL
	if tweak != nil {
		tweak(&cfg) // ... and of the worker (e.g. an unreachable calendar)
	}
	s := recordStack{pool: pool, tc: temporaltest.Temporal(t), queue: testsupport.TaskQueue(t), calendarURL: cfg.CalendarURL}
	testsupport.Worker(t, s.tc, s.queue, func(r worker.Registry) {
		acts := stack.NewActivities(cfg, pool, testsupport.Tenants(t, pool), s.tc)
		stack.Register(r, acts)
	}, interceptors...)
	return s
}

func recordRequest(t *testing.T, customer string, wd time.Weekday, hour int) appointment.Request {
	return appointment.Request{
		Tenant: "demo", Customer: customer, CustomerKey: testsupport.CustomerKey(t, "demo", customer), Service: "tire-change",
		SlotStart: testsupport.Slot(t, wd, hour), Channel: workflows.ChannelAPI, DepositAmount: 2000, Currency: "eur", PaymentMethod: "pm_card_visa",
		Tuning: workflows.Tuning{MaxRetryInterval: 200 * time.Millisecond},
	}
}

func (s recordStack) book(t *testing.T, ctx context.Context, req appointment.Request) (client.WorkflowRun, appointment.State) {
	t.Helper()
	run, existing, err := appointment.Start(ctx, s.tc, s.queue, req)
	require.NoError(t, err)
	require.False(t, existing, "a recording starts a fresh intent")
	var st appointment.State
	require.NoError(t, run.Get(ctx, &st))
	return run, st
}

// save writes the closed history of workflowID (latest run) as protojson.
func (s recordStack) save(t *testing.T, ctx context.Context, workflowID, name string) {
	t.Helper()
	// A child may still be closing after its parent returned.
	testsupport.Eventually(t, 30*time.Second, workflowID+" to close", func() bool {
		d, err := s.tc.DescribeWorkflowExecution(ctx, workflowID, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	})
	writeHistory(t, fetchHistory(t, ctx, s.tc, workflowID, ""), name)
}

func TestRecordHistories(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}

	t.Run("happy", func(t *testing.T) {
		s := newRecordStack(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		run, st := s.book(t, ctx, recordRequest(t, "+4915112340001", time.Tuesday, 14))
		require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
		require.Equal(t, deposit.Captured, st.Payment)
		s.save(t, ctx, run.GetID(), "happy.appointment.json")
		// The card deposit ran as the appointment's own steps.
		_, err := s.tc.DescribeWorkflowExecution(ctx, deposit.WorkflowID(run.GetID()), "")
		var missing *serviceerror.NotFound
		require.ErrorAs(t, err, &missing, "no payment saga for a card deposit")
	})

	t.Run("payment-declined", func(t *testing.T) {
		s := newRecordStack(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req := recordRequest(t, "+4915112340002", time.Thursday, 9)
		req.PaymentMethod = "pm_card_chargeDeclined"
		run, st := s.book(t, ctx, req)
		require.Equal(t, workflows.StatusPaymentFailed, st.Status, st.Reason)
		require.Equal(t, "card_declined", st.Reason)
		s.save(t, ctx, run.GetID(), "payment-declined.appointment.json")
	})

	t.Run("hold-expired", func(t *testing.T) {
		// Every hold lapses before its confirmation: one re-hold, then the
		// whole compensation chain (cancel booking, void, release).
		s := newRecordStack(t, func(c *config.Config) { c.HoldTTL = time.Millisecond })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		run, st := s.book(t, ctx, recordRequest(t, "+4915112340006", time.Monday, 15))
		require.Equal(t, workflows.StatusRejected, st.Status)
		require.Equal(t, "hold_expired", st.Reason)
		s.save(t, ctx, run.GetID(), "hold-expired.appointment.json")
	})

	t.Run("slot-taken", func(t *testing.T) {
		s := newRecordStack(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		first := recordRequest(t, "+4915112340003", time.Wednesday, 10)
		first.ResourceID = "bay-1"
		second := first
		second.Customer = "+4915112340004"
		second.CustomerKey = testsupport.CustomerKey(t, "demo", second.Customer) // its own intent
		_, st1 := s.book(t, ctx, first)
		require.Equal(t, workflows.StatusConfirmed, st1.Status, st1.Reason)
		run, st := s.book(t, ctx, second)
		require.Equal(t, workflows.StatusRejected, st.Status)
		require.Equal(t, "slot_unavailable", st.Reason)
		require.NotEmpty(t, st.Alternatives)
		s.save(t, ctx, run.GetID(), "slot-taken.appointment.json")
	})

	t.Run("review-abandon", func(t *testing.T) {
		// The hold reaches the calendar, its answer is lost and the
		// calendar stays down past the lookup's budget: the outcome is
		// unknown, so a review case opens and a person abandons. The
		// calendar is back by then, and the abandon releases the hold
		// the saga never heard of.
		s, outage := newOutageStack(t, func(c *config.Config) *string { return &c.CalendarURL },
			func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/v1/holds" })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req := recordRequest(t, "+4915112340005", time.Friday, 11)
		req.Tuning = outageTuning
		req.Tuning.ReconcileTimeout = 2 * time.Second // the case opens soon
		run, existing, err := appointment.Start(ctx, s.tc, s.queue, req)
		require.NoError(t, err)
		require.False(t, existing)
		var waiting appointment.State
		testsupport.Eventually(t, 60*time.Second, "the review case to open", func() bool {
			waiting, err = appointment.StatusOf(ctx, s.tc, run.GetID())
			return err == nil && waiting.ReviewCase != ""
		})
		require.Equal(t, workflows.StatusNeedsReview, waiting.Status)
		c, err := (&review.Store{Pool: s.pool}).Get(ctx, waiting.ReviewCase)
		require.NoError(t, err, "the case is in the review queue")
		require.Equal(t, run.GetID(), c.WorkflowID)
		outage.Up()
		require.NoError(t, s.tc.SignalWorkflow(ctx, run.GetID(), "", workflows.SignalReviewDecision,
			workflows.ReviewDecision{CaseID: waiting.ReviewCase, Action: review.ActionAbandon}))
		var st appointment.State
		require.NoError(t, run.Get(ctx, &st))
		require.Equal(t, workflows.StatusRejected, st.Status)
		require.Contains(t, st.Reason, "review decided abandon")
		var status string
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT status FROM calendar_reservations WHERE reference = $1`, run.GetID()).Scan(&status),
			"the hold reached the calendar, once")
		require.Equal(t, "released", status, "the abandon released the hold the saga never heard of")
		s.save(t, ctx, run.GetID(), "review-abandon.appointment.json")
	})

	t.Run("conversation-continue-as-new", func(t *testing.T) {
		// A conversation reaches its restart boundary in the workflow task
		// that also delivers a reviewer's "separate": the run that
		// continues as new (with the decision handled) is recorded.
		s := newConvStack(t)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		workflowID, firstRun := reviewDecisionAtContinueAsNew(t, s)
		saveRun(t, ctx, s.tc, workflowID, firstRun, "conversation-continue-as-new.json")
	})

	t.Run("payment-link", func(t *testing.T) {
		// Link mode: the customer pays the link from the outbox on the
		// hosted page; the relayed webhook makes the saga read the session,
		// then it books and captures (versioned: payment-link). Recorded
		// before the link's creation went in rounds.
		recordPaidLink(t, "+4915112340008", "payment-link")
	})

	t.Run("payment-link-rounds", func(t *testing.T) {
		// The same, recorded once the link's creation went in rounds
		// (versioned: payment-link-create-rounds).
		recordPaidLink(t, "+4915112340009", "payment-link-rounds")
	})

	t.Run("already-booked", func(t *testing.T) {
		// The front desk booked the customer by hand under its own
		// reference; the agent's saga is refused, links that booking and
		// tells the customer (versioned: already-booked-links-existing).
		s := newRecordStack(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req := recordRequest(t, "+4915112340007", time.Wednesday, 11)
		desk := calendar.NewClient(s.calendarURL, config.DefaultAPIToken)
		h, err := desk.CreateHold(ctx, "desk-hold", calendar.HoldRequest{
			ResourceID: "bay-1", Service: req.Service, Start: req.SlotStart, Customer: req.Customer, Reference: "frontdesk:record"})
		require.NoError(t, err)
		_, err = desk.ConfirmHold(ctx, "desk-confirm", h.ID)
		require.NoError(t, err)
		run, st := s.book(t, ctx, req)
		require.Equal(t, workflows.StatusAlreadyBooked, st.Status, st.Reason)
		s.save(t, ctx, run.GetID(), "already-booked.appointment.json")
	})
}

// saveRun writes the history of one closed run (a run that continued as
// new, whose workflow ID names a newer run) as protojson.
func saveRun(t *testing.T, ctx context.Context, tc client.Client, workflowID, runID, name string) {
	t.Helper()
	h := fetchHistory(t, ctx, tc, workflowID, runID)
	last := h.Events[len(h.Events)-1].GetEventType()
	require.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, last, "the run has not closed")
	writeHistory(t, h, name)
}

// fetchHistory reads the history of one run ("": the latest).
func fetchHistory(t *testing.T, ctx context.Context, tc client.Client, workflowID, runID string) *historypb.History {
	t.Helper()
	h := &historypb.History{}
	it := tc.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	require.NotEmpty(t, h.Events)
	return h
}

// writeHistory writes h as indented protojson into the histories.
func writeHistory(t *testing.T, h *historypb.History, name string) {
	t.Helper()
	raw, err := protojson.Marshal(h)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, json.Indent(&out, raw, "", "  "), "stable formatting for reviewable diffs")
	out.WriteByte('\n')
	require.NoError(t, os.MkdirAll(historiesDir, 0o755))
	path := filepath.Join(historiesDir, name)
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
	t.Logf("recorded %s: %d events", path, len(h.Events))
}

// recordPaidLink books in link mode, pays the link on the hosted page and
// saves the appointment's and the payment saga's histories as name.*.json.
func recordPaidLink(t *testing.T, customer, name string) {
	s := newRecordStack(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := recordRequest(t, customer, time.Thursday, 15)
	req.PaymentMethod = ""
	run, existing, err := appointment.Start(ctx, s.tc, s.queue, req)
	require.NoError(t, err)
	require.False(t, existing)
	payByLink(t, ctx, s.tc, s.pool, run.GetID())
	var st appointment.State
	require.NoError(t, run.Get(ctx, &st))
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	s.save(t, ctx, run.GetID(), name+".appointment.json")
	s.save(t, ctx, deposit.WorkflowID(run.GetID()), name+".payment.json")
}
