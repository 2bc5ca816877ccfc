package workflows_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// A booking's lifecycle started on today's code takes its baseline: one
// version marker and one search attribute upsert (the baseline's
// TemporalChangeVersion) at its start, where it recorded three markers
// and four upserts before; a cancel then upserts Cancelling once and
// Cancelled, and records no marker (before: three more markers and
// Cancelling twice). What the Web UI lists is unchanged: Confirmed and
// the slot from the start, Cancelled after the cancel.
func TestLifecycleRecordsOnlyItsBaseline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	req := request(t, "+4915112348101", time.Thursday, 9)
	r, st := run(t, e, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lc := e.tc.GetWorkflow(ctx, st.Lifecycle, "")

	published := func() (string, time.Time) {
		sa := shownAttributes(t, e.tc, st.Lifecycle)
		status, _ := sa.GetKeyword(workflows.BookingStatusKey)
		slot, _ := sa.GetTime(workflows.SlotStartKey)
		return status, slot
	}
	var events []*historypb.HistoryEvent
	testsupport.Eventually(t, 30*time.Second, "the lifecycle's first workflow task", func() bool {
		events = history(t, e.tc, lc)
		return slices.ContainsFunc(events, func(ev *historypb.HistoryEvent) bool {
			return ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
		})
	})
	require.Equal(t, []string{lifecycle.Baseline.ID}, versionMarkers(t, &historypb.History{Events: events}))
	require.Equal(t, [][]string{{"TemporalChangeVersion"}}, upserted(events))
	status, slot := published()
	require.Equal(t, string(workflows.StatusConfirmed), status)
	require.True(t, req.SlotStart.Equal(slot), "slot %s, published %s", req.SlotStart, slot)

	cancelled, err := lifecycle.Cancel(ctx, e.tc, r.GetID(), lifecycle.CancelUpdateID("demo", "baseline-1"), lifecycle.CancelRequest{Reason: "baseline test"})
	require.NoError(t, err)
	require.Equal(t, workflows.StatusCancelled, cancelled.Status)
	events = history(t, e.tc, lc)
	require.Equal(t, []string{lifecycle.Baseline.ID}, versionMarkers(t, &historypb.History{Events: events}), "the cancel records no marker of its own")
	attrs := []string{"BookingStatus", "SlotStart"}
	require.Equal(t, [][]string{{"TemporalChangeVersion"}, attrs, attrs}, upserted(events), "Cancelling once, then Cancelled")
	shownStatus, _ := published()
	require.Equal(t, string(workflows.StatusCancelled), shownStatus)
	got := e.effects(t, req.Customer, req.SlotStart)
	require.Equal(t, map[string]int{"cancelled": 1}, got.Reservations)
}

// An appointment started on today's code takes its baseline: one version
// marker where a confirmed booking recorded six, and five upserts where
// it made twelve: the baseline's TemporalChangeVersion, then only the
// statuses a person can see it wait in (Requested and the customer are
// the start's search attributes; Held lasts one workflow task). The
// booking, its deposit and what the Web UI lists are as before.
func TestAppointmentRecordsOnlyItsBaseline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	req := request(t, "+4915112348102", time.Thursday, 10)
	r, st := run(t, e, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	events := history(t, e.tc, r)
	require.Equal(t, []string{appointment.Baseline.ID}, versionMarkers(t, &historypb.History{Events: events}))
	require.Equal(t, []string{"", "Holding", "Authorizing", "Confirming", "Confirmed"}, upsertedStatuses(t, events))

	sa := shownAttributes(t, e.tc, r.GetID())
	status, _ := sa.GetKeyword(workflows.BookingStatusKey)
	require.Equal(t, string(workflows.StatusConfirmed), status)
	masked, _ := sa.GetKeyword(workflows.CustomerMaskedKey)
	require.Equal(t, mask.Phones(req.Customer), masked)
	got := e.effects(t, req.Customer, req.SlotStart)
	require.Equal(t, map[string]int{"confirmed": 1}, got.Reservations)
	require.Equal(t, map[string]int{"succeeded": 1}, got.Intents)
}

// A customer's conversation started on today's code takes its baseline:
// a booking through it records one version marker in the conversation
// where it recorded three (the legacy hand-over, local reads and the
// customer key), and the customer gets the reply and the confirmation.
func TestConversationRecordsOnlyItsBaseline(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	fake := fakeTwilio(t, s)
	s.worker(t)
	customer := conversationCustomer()
	s.say(t, conversationInput(customer, 0), "SMbaseline", "Reifenwechsel "+slotText(t, 12))
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool {
		return s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer) == 1 &&
			messagesTo(fake, customer, "") == 2 // the reply and the confirmation
	})
	id := conversation.LegacyWorkflowID("demo", customer)
	s.idle(t, id, "")
	events := history(t, s.tc, s.tc.GetWorkflow(context.Background(), id, ""))
	require.Equal(t, []string{conversation.Baseline.ID}, versionMarkers(t, &historypb.History{Events: events}))
	require.Equal(t, [][]string{{"TemporalChangeVersion"}}, upserted(events))
}

// upsertedStatuses lists the BookingStatus each search attribute upsert
// in events set, "" for one that set none.
func upsertedStatuses(t *testing.T, events []*historypb.HistoryEvent) []string {
	var out []string
	for _, ev := range events {
		if u := ev.GetUpsertWorkflowSearchAttributesEventAttributes(); u != nil {
			var status string
			if p, ok := u.GetSearchAttributes().GetIndexedFields()[workflows.BookingStatusKey.GetName()]; ok {
				require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &status))
			}
			out = append(out, status)
		}
	}
	return out
}

// upserted lists, per search attribute upsert in events, the names it set.
func upserted(events []*historypb.HistoryEvent) [][]string {
	var out [][]string
	for _, ev := range events {
		if u := ev.GetUpsertWorkflowSearchAttributesEventAttributes(); u != nil {
			var names []string
			for name := range u.GetSearchAttributes().GetIndexedFields() {
				names = append(names, name)
			}
			slices.Sort(names)
			out = append(out, names)
		}
	}
	return out
}

// shownAttributes are the search attributes of workflowID's latest run,
// as the Web UI lists them (read from the run, not the visibility store).
func shownAttributes(t *testing.T, c client.Client, workflowID string) temporal.SearchAttributes {
	t.Helper()
	d, err := c.DescribeWorkflow(context.Background(), workflowID, "")
	require.NoError(t, err)
	return d.TypedSearchAttributes
}
