package workflows_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
)

// convStack is a real stack for conversation tests: PostgreSQL, the APIs,
// the in-process Temporal server; workers are started (and stopped) by
// the test, so it can decide which signals one workflow task sees.
type convStack struct {
	pool  *pgxpool.Pool
	tc    client.Client
	queue string
	cfg   config.Config
}

// worker starts a worker on the stack's queue; the returned func stops it
// (once, also at the end of the test).
func (s convStack) worker(t *testing.T) func() {
	t.Helper()
	w := worker.New(s.tc, s.queue, worker.Options{WorkflowPanicPolicy: worker.FailWorkflow})
	acts := stack.NewActivities(s.cfg, s.pool, testsupport.Tenants(t, s.pool), s.tc)
	stack.Register(w, acts)
	require.NoError(t, w.Start())
	var once sync.Once
	stop := func() { once.Do(w.Stop) }
	t.Cleanup(stop)
	return stop
}

func (s convStack) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// conversationCustomer is a fresh number: the server is shared by the
// package and by reruns, and a conversation lives as long as its customer.
func conversationCustomer() string { return fmt.Sprintf("+49151%08d", rand.IntN(100000000)) }

// say hands one inbound event to the customer's conversation the way the
// gateway does (SignalWithStart), starting it if needed.
func (s convStack) say(t *testing.T, in conversation.Input, eventID, text string) {
	t.Helper()
	s.sayOn(t, in, workflows.ChannelWhatsApp, eventID, text)
}

// sayOn is say on another channel.
func (s convStack) sayOn(t *testing.T, in conversation.Input, channel workflows.Channel, eventID, text string) {
	t.Helper()
	id := conversation.LegacyWorkflowID(in.Tenant, in.Customer)
	_, err := s.tc.SignalWithStartWorkflow(context.Background(), id, conversation.SignalInbound,
		conversation.InboundEvent{EventID: eventID, Channel: channel, Text: text, ReceivedAt: time.Now()},
		client.StartWorkflowOptions{ID: id, TaskQueue: s.queue}, conversation.WorkflowName, in)
	require.NoError(t, err)
}

func conversationInput(customer string, restartAfter int) conversation.Input {
	return conversation.Input{Tenant: "demo", Customer: customer, CustomerKey: workflowtest.CustomerKey(customer), DepositAmount: 2000, Currency: "eur",
		PaymentMethod: "pm_card_visa", Timezone: "Europe/Berlin", EventsBeforeRestart: restartAfter}
}

// slotText names hour:00 on the next Tuesday as a customer writes it.
func slotText(t *testing.T, hour int) string {
	d := testsupport.Slot(t, time.Tuesday, hour)
	return fmt.Sprintf("am %d.%d. um %d Uhr", d.Day(), int(d.Month()), hour)
}

// idle waits until the run has no work in flight: its last event is a
// completed workflow task (it waits for a signal), no activity is pending
// and no child it started is still running (its completion would be a
// workflow task of its own).
func (s convStack) idle(t *testing.T, workflowID, runID string) {
	t.Helper()
	ctx := context.Background()
	testsupport.Eventually(t, 60*time.Second, workflowID+" to wait for the customer", func() bool {
		d, err := s.tc.DescribeWorkflowExecution(ctx, workflowID, runID)
		if err != nil || len(d.GetPendingActivities()) > 0 || len(d.GetPendingChildren()) > 0 {
			return false
		}
		var last enumspb.EventType
		it := s.tc.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return false
			}
			last = ev.GetEventType()
		}
		return last == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
	})
}

// reviewDecisionAtContinueAsNew drives a conversation (restart after 3
// events) to a potential-duplicate review, then, with no worker running,
// delivers its third event (the one that triggers continue-as-new) and
// the reviewer's "separate" so that one workflow task sees both. It
// returns the first run's ID (the run that continued as new).
func reviewDecisionAtContinueAsNew(t *testing.T, s convStack) (workflowID, firstRun string) {
	t.Helper()
	ctx := context.Background()
	in := conversationInput(conversationCustomer(), 3)
	workflowID = conversation.LegacyWorkflowID(in.Tenant, in.Customer)
	stop := s.worker(t)
	s.say(t, in, "SMcan1", "Reifenwechsel "+slotText(t, 14))
	testsupport.Eventually(t, 60*time.Second, "the first booking confirmed", func() bool {
		return s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, in.Customer) == 1 &&
			s.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation' AND recipient = $1`, in.Customer) == 1
	})
	s.say(t, in, "SMcan2", "Inspektion "+slotText(t, 14))
	var caseID string
	testsupport.Eventually(t, 30*time.Second, "a potential-duplicate case", func() bool {
		return s.pool.QueryRow(ctx, `SELECT id FROM review_cases WHERE reason = 'potential_duplicate' AND workflow_id = $1`, workflowID).Scan(&caseID) == nil
	})
	d, err := s.tc.DescribeWorkflowExecution(ctx, workflowID, "")
	require.NoError(t, err)
	firstRun = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	s.idle(t, workflowID, firstRun)
	stop()

	// The reviewer decides as the gateway does: record, then signal.
	_, err = (&review.Store{Pool: s.pool}).Resolve(ctx, caseID, review.ActionSeparate)
	require.NoError(t, err)
	s.say(t, in, "SMcan3", "Danke")
	require.NoError(t, s.tc.SignalWorkflow(ctx, workflowID, firstRun, workflows.SignalReviewDecision,
		workflows.ReviewDecision{CaseID: caseID, Action: review.ActionSeparate}))
	s.worker(t)

	testsupport.Eventually(t, 60*time.Second, "the first run to continue as new", func() bool {
		d, err := s.tc.DescribeWorkflowExecution(ctx, workflowID, firstRun)
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW
	})
	requireSignalsInOneTask(t, s, workflowID, firstRun)
	return workflowID, firstRun
}

// requireSignalsInOneTask proves the setup: the event that triggered the
// restart and the decision are both delivered to one workflow task.
func requireSignalsInOneTask(t *testing.T, s convStack, workflowID, runID string) {
	t.Helper()
	var signals []string
	it := s.tc.GetWorkflowHistory(context.Background(), workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		switch {
		case ev.GetWorkflowExecutionSignaledEventAttributes() != nil:
			signals = append(signals, ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName())
		case ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			signals = append(signals, "|")
		}
	}
	joined := strings.Join(signals, " ")
	require.Contains(t, joined, "| "+conversation.SignalInbound+" "+workflows.SignalReviewDecision+" |",
		"the third event and the decision reach one workflow task: %s", joined)
}

func newConvStack(t *testing.T) convStack {
	t.Helper()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.CalendarURL = stacktest.CalendarAPI(t, cfg, pool).URL
	cfg.PaymentsURL = stacktest.PaymentsAPI(t, cfg, pool).URL
	return convStack{pool: pool, tc: temporaltest.Temporal(t), queue: testsupport.TaskQueue(t), cfg: cfg}
}

// TestMatrix17ReviewDecisionSurvivesContinueAsNew proves failure-matrix
// item 17 (a review decision arrives in the workflow task in which the
// conversation reaches its restart boundary): the decision is handled
// before the run continues as new. Downstream: the reviewer's "separate"
// ends in a second confirmed reservation of the customer.
func TestMatrix17ReviewDecisionSurvivesContinueAsNew(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	workflowID, _ := reviewDecisionAtContinueAsNew(t, s)
	customer := strings.TrimPrefix(workflowID, "customer:demo:")
	testsupport.Eventually(t, 60*time.Second, "the separate booking confirmed", func() bool {
		return s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer) == 2
	})
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, customer), "no other reservation")
	require.Equal(t, 2, s.count(t, `SELECT count(DISTINCT service) FROM calendar_reservations WHERE customer = $1`, customer))
	testsupport.Eventually(t, 30*time.Second, "both confirmations", func() bool {
		return s.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation' AND recipient = $1`, customer) == 2
	})
}

// fakeTwilio runs the outbox relay against an in-process fake of
// Twilio's message API for the test's lifetime.
func fakeTwilio(t *testing.T, s convStack) *twilio.FakeServer {
	t.Helper()
	fake := twilio.NewFakeServer()
	t.Cleanup(fake.Close)
	provider := twilio.New(fake.AccountSID, fake.AuthToken, s.cfg.TwilioFrom, twilio.WithBaseURL(fake.URL()))
	sender := stack.OutboxSender(s.cfg, s.pool, provider, stack.Logger(s.cfg, testsupport.LogWriter(t)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sender.Run(ctx, 100*time.Millisecond) // ends with the test's context
	}()
	t.Cleanup(func() { cancel(); <-done })
	t.Cleanup(func() {
		if t.Failed() { // what the customers were told says most about why
			for _, m := range fake.Messages() {
				t.Logf("message to %s: %q", mask.Phones(m.To), m.Body)
			}
		}
	})
	return fake
}

// messagesTo counts the messages at the fake Twilio to customer whose
// body contains part.
func messagesTo(fake *twilio.FakeServer, customer, part string) int {
	n := 0
	for _, m := range fake.Messages() {
		if strings.HasSuffix(m.To, customer) && strings.Contains(m.Body, part) {
			n++
		}
	}
	return n
}

// TestCancellationWishOnTwoChannelsCancelsTheBookingOnce: after a
// confirmed booking the customer writes "Bitte stornieren" and, at the
// same time, says "Ich muss absagen" on a call. The booking is cancelled
// once in the calendar, the deposit refunded once, and the customer gets
// one cancellation message, no further reply and no review case.
func TestCancellationWishOnTwoChannelsCancelsTheBookingOnce(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	fake := fakeTwilio(t, s)
	s.worker(t)
	customer := conversationCustomer()
	in := conversationInput(customer, 0)
	s.say(t, in, "SMbook", "Reifenwechsel "+slotText(t, 10))
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool {
		return s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer) == 1 &&
			messagesTo(fake, customer, "") == 2 // the reply and the confirmation
	})
	s.say(t, in, "SMcancel", "Bitte stornieren")
	s.sayOn(t, in, workflows.ChannelVoice, "CAcancel", "Ich muss absagen")
	testsupport.Eventually(t, 60*time.Second, "the refund and the cancellation message", func() bool {
		return s.count(t, `SELECT count(*) FROM refunds`) == 1 &&
			messagesTo(fake, customer, "storniert") == 1
	})
	s.idle(t, conversation.LegacyWorkflowID("demo", customer), "")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'cancelled'`, customer))
	require.Zero(t, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status IN ('held', 'confirmed')`, customer))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM refunds`), "one refund")
	require.Equal(t, 3, messagesTo(fake, customer, ""), "reply, confirmation, one cancellation message")
	require.Zero(t, s.count(t, `SELECT count(*) FROM review_cases`))
}

// TestCancellationWishWhileHoldingReleasesTheSlot: "stornieren" while the
// appointment holds its slot (its deposit authorisation is on its way)
// cancels it: no active reservation, no live authorisation, no case.
func TestCancellationWishWhileHoldingReleasesTheSlot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := convStack{pool: e.pool, tc: e.tc, queue: e.queue, cfg: e.cfg}
	pause := e.payments.PauseAt("POST", "/v1/payment_intents", false)
	var release sync.Once
	t.Cleanup(func() { release.Do(pause.Release) })
	s.worker(t)
	customer := conversationCustomer()
	in := conversationInput(customer, 0)
	s.say(t, in, "SMhold", "Reifenwechsel "+slotText(t, 11))
	select {
	case <-pause.Reached():
	case <-time.After(60 * time.Second):
		t.Fatal("the authorisation never started")
	}
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'held'`, customer))
	s.say(t, in, "SMcancel", "Bitte stornieren")
	testsupport.Eventually(t, 30*time.Second, "the cancellation reply", func() bool {
		return s.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:SMcancel' AND body LIKE '%Wir stornieren%'`) == 1
	})
	release.Do(pause.Release)
	testsupport.Eventually(t, 60*time.Second, "the hold released", func() bool {
		return s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status IN ('held', 'confirmed')`, customer) == 0
	})
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, customer))
	testsupport.Eventually(t, 30*time.Second, "no live authorisation", func() bool {
		return s.count(t, `SELECT count(*) FROM payment_intents WHERE status IN ('requires_capture', 'succeeded')`) == 0
	})
	require.Zero(t, s.count(t, `SELECT count(*) FROM review_cases`))
}
