package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// The bare side of item 4: the same workflow shape as a booking made
// through a webhook, with no-op activities. Conversation: 1 local
// activity (the hand-over ask) once, then per message 2 local activities
// (extract, validate), 1 activity (dedup), start the appointment as an
// abandoned child, 1 activity (reply). Appointment: 5 activities (hold,
// authorise the card, confirm, capture, send the confirmation: the card
// deposit is the appointment's own steps), then start the booking's
// lifecycle as an abandoned child. No search attributes, no timers, no
// work in the activities: what remains is the engine. bareShape is
// checked against the real histories.

// bareInput names the appointment a bare conversation starts.
type bareInput struct{ Appointment string }

// BareNoop is the no-op activity.
func BareNoop(context.Context) error { return nil }

func bareActivity(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 15 * time.Second})
	return workflow.ExecuteActivity(ctx, BareNoop).Get(ctx, nil)
}

// bareLocal is a no-op local activity, as the conversation's reads are.
func bareLocal(ctx workflow.Context) error {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 15 * time.Second})
	return workflow.ExecuteLocalActivity(ctx, BareNoop).Get(ctx, nil)
}

// BareConversation handles one inbound signal per customer like the real
// conversation does, then waits for the next.
func BareConversation(ctx workflow.Context, in bareInput) error {
	ch := workflow.GetSignalChannel(ctx, "inbound")
	// A keyed conversation's first run asks once whether a conversation
	// under the legacy ID has state to hand over (AskHandOver).
	if err := bareLocal(ctx); err != nil {
		return err
	}
	for {
		var ev any
		ch.Receive(ctx, &ev)
		for _, step := range []func(workflow.Context) error{bareLocal, bareLocal, bareActivity} {
			if err := step(ctx); err != nil {
				return err
			}
		}
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: in.Appointment, ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		})
		f := workflow.ExecuteChildWorkflow(cctx, BareAppointment)
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
			return err
		}
		if err := bareActivity(ctx); err != nil {
			return err
		}
	}
}

// BareAppointment is the appointment saga's happy path without work.
func BareAppointment(ctx workflow.Context) (string, error) {
	for range 5 { // hold, authorise, confirm, capture, confirmation
		if err := bareActivity(ctx); err != nil {
			return "", err
		}
	}
	// The booking's lifecycle: an abandoned child, started before the end.
	lctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: "booking:" + workflow.GetInfo(ctx).WorkflowExecution.ID, ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	if err := workflow.ExecuteChildWorkflow(lctx, BareBooking).GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		return "", err
	}
	return "Confirmed", nil
}

// BareBooking stands for the booking's lifecycle, which waits for the
// slot: here it ends at once.
func BareBooking(workflow.Context) error { return nil }

func registerBare(r worker.Registry) {
	r.RegisterWorkflow(BareConversation)
	r.RegisterWorkflow(BareAppointment)
	r.RegisterWorkflow(BareBooking)
	r.RegisterActivity(BareNoop)
}

// shape counts what one booking made the engine do, per workflow, from
// its history.
type shape struct {
	Activities, LocalActivities, Children, SignalsOut, SignalsIn, Timers, Upserts, WorkflowTasks, Events int
	// Dispatch is the median time a workflow task waited from scheduled
	// to started: the engine's hand-over to a worker, once per step.
	// Run is the median time an activity ran (started to completed).
	Dispatch, Run time.Duration
}

func (s shape) String() string {
	return fmt.Sprintf("%d activities, %d local activities, %d child, %d signals sent, %d received, %d timers, %d search attribute upserts, "+
		"%d workflow tasks (median wait scheduled → started %.0f ms), median activity run %.1f ms, %d events",
		s.Activities, s.LocalActivities, s.Children, s.SignalsOut, s.SignalsIn, s.Timers, s.Upserts, s.WorkflowTasks, ms(s.Dispatch), ms(s.Run), s.Events)
}

func historyShape(t testing.TB, tc client.Client, id string) shape {
	var s shape
	var scheduled, started time.Time
	var waits, runs []float64
	it := tc.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err, "history of %s", id)
		s.Events++
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			scheduled = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			waits = append(waits, float64(ev.GetEventTime().AsTime().Sub(scheduled)))
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			started = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			runs = append(runs, float64(ev.GetEventTime().AsTime().Sub(started)))
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			s.Activities++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				s.LocalActivities++
			}
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			s.Children++
		case enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
			s.SignalsOut++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			s.SignalsIn++
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			s.Timers++
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			s.Upserts++
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			s.WorkflowTasks++
		}
	}
	s.Dispatch, s.Run = time.Duration(SpreadOf(waits).Median), time.Duration(SpreadOf(runs).Median)
	return s
}

// bookingShapes are the shapes of one booking's two workflows before its
// lifecycle (a card deposit is the appointment's own steps).
type bookingShapes struct{ Conversation, Appointment shape }

func shapesOf(t testing.TB, tc client.Client, conversation, appointment string) bookingShapes {
	return bookingShapes{
		Conversation: historyShape(t, tc, conversation),
		Appointment:  historyShape(t, tc, appointment),
	}
}
