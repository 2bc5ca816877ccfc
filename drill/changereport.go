package drill

import (
	"context"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// ChangeReport is what the customers did after their bookings were
// confirmed (cancels, moves, their duplicates) and what it left (Checks).
type ChangeReport struct {
	// Mode is how the changes were sent: api, chat or off.
	Mode ChangeMode `json:"mode"`
	// Planned are the scenarios with a change; Sent those whose booking
	// was confirmed, so that the change went out.
	Planned map[ChangeKind]int `json:"planned"`
	Sent    map[ChangeKind]int `json:"sent"`
	// Duplicated counts the changes sent more than once, by how.
	Duplicated map[Duplication]int `json:"duplicated"`
	// Posts are API requests (api) or change events sent as webhooks
	// (chat; their posts are in the traffic); Answers the final answers
	// (api: status and problem code; chat: "sent").
	Posts      int            `json:"posts"`
	Answers    map[string]int `json:"answers"`
	Unanswered int            `json:"unanswered"`
	Checks     ChangeChecks   `json:"checks"`
}

// failures are the findings of the changes: an unanswered change and
// every check.
func (c ChangeReport) failures() []string {
	var out []string
	if c.Unanswered > 0 {
		out = append(out, fmt.Sprintf("%d changes without a final answer (%s)", c.Unanswered, intLine(c.Answers)))
	}
	return append(out, c.Checks.failures()...)
}

// changeReport measures the changes once everything settled.
func (e *env) changeReport(ctx context.Context, opts Options, all []Scenario, states []wishState) (ChangeReport, error) {
	r := ChangeReport{Mode: opts.Changes, Planned: map[ChangeKind]int{}, Sent: map[ChangeKind]int{},
		Duplicated: map[Duplication]int{}, Answers: map[string]int{}}
	for _, s := range all {
		if s.Change != nil {
			r.Planned[s.Change.Kind]++
		}
	}
	sent := e.changes.list()
	for _, a := range sent {
		r.Sent[a.change.Kind]++
		if a.change.Dup != Once {
			r.Duplicated[a.change.Dup]++
		}
		if a.unanswered {
			r.Unanswered++
		}
	}
	if e.changes != nil {
		e.changes.mu.Lock()
		r.Posts = e.changes.posts
		for k, v := range e.changes.answers {
			r.Answers[k] = v
		}
		e.changes.mu.Unlock()
	}
	var confirmed []wishState
	for _, st := range states {
		if st.outcome == Confirmed {
			confirmed = append(confirmed, st)
		}
	}
	var err error
	r.Checks, err = e.checkChanges(ctx, sent, confirmed, e.twilio.Messages(), drillPolicy())
	return r, err
}

// settleChanges waits until every change sent has its effect in the rows
// (a cancellation message, the booking at its new slot, a refusal) and the
// outbox is empty, or until timeout: what is still missing then is counted
// by the checks.
func (e *env) settleChanges(ctx context.Context, timeout time.Duration, progress func(string, ...any)) {
	deadline := time.Now().Add(timeout)
	var waiting []string
	for ctx.Err() == nil && time.Now().Before(deadline) {
		// With the messages at Twilio: a rebook or move-back is done only
		// once its new booking's confirmation reached the customer.
		rows, err := e.changeRows(ctx, e.twilio.Messages())
		busy, err2 := e.count(ctx, `SELECT count(*) FROM outbox_messages WHERE state = 'pending'`)
		unreminded, err3 := e.count(ctx, unremindedSQL)
		busy += unreminded
		if err == nil && err2 == nil && err3 == nil {
			waiting = waiting[:0]
			for _, a := range e.changes.list() {
				if !a.unanswered && !changeDone(a, rows) {
					waiting = append(waiting, fmt.Sprintf("%s %s", a.change.Kind, a.workflowID))
				}
			}
			if len(waiting) == 0 && busy == 0 {
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	progress("changes: some still without effect after %s; the checks count them: %s", timeout, mask.Phones(strings.Join(waiting, ", ")))
	e.describeUnreminded(ctx, progress)
}

// describeUnreminded prints, for the investigation, what Temporal knows of
// each lifecycle whose reminder never came: its state and its steps.
func (e *env) describeUnreminded(ctx context.Context, progress func(string, ...any)) {
	refs, err := e.pairs(ctx, strings.Replace(unremindedSQL, "SELECT count(*)", "SELECT c.reference, c.reference", 1))
	if err != nil {
		progress("unreminded bookings: %v", err)
		return
	}
	for ref := range refs {
		st, err := lifecycle.StateOf(ctx, e.tc, ref)
		if err != nil {
			progress("no reminder for %s: lifecycle: %v", ref, err)
			continue
		}
		progress("no reminder for %s: lifecycle %s, slot %s, reminders %v, steps %+v; input %s", ref, st.Status, st.SlotStart, st.Reminders, st.Steps, e.lifecycleInput(ctx, ref))
	}
}

// lifecycleInput is the lifecycle's input as its history starts, in words.
func (e *env) lifecycleInput(ctx context.Context, ref string) string {
	it := e.tc.GetWorkflowHistory(ctx, lifecycle.WorkflowID(ref), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return "no history"
	}
	ev, err := it.Next()
	if err != nil {
		return err.Error()
	}
	var in lifecycle.Input
	if err := converter.GetDefaultDataConverter().FromPayloads(ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in); err != nil {
		return err.Error()
	}
	terms := "no terms"
	if in.Terms != nil {
		terms = fmt.Sprintf("terms reminders %v lead %s", in.Terms.Reminders, in.Terms.ReminderLead)
	}
	return fmt.Sprintf("reminders %v, lead %s, %s", in.Reminders, in.Tuning.ReminderLead, terms)
}

// unremindedSQL counts confirmed bookings whose lifecycle has not yet
// reserved a reminder (nor cancelled them): the reminder is due at once in
// the drill, but a lifecycle started by the last bookings, or retried
// after a worker kill, reserves it a few seconds after the confirmation.
// An agent's booking gets no reminder in the drill (remindable).
const unremindedSQL = `SELECT count(*) FROM outbox_messages c WHERE c.kind = 'confirmation'
	AND NOT EXISTS (SELECT 1 FROM outbox_messages r WHERE r.tenant_id = c.tenant_id AND r.reference = c.reference
		AND (r.kind LIKE 'reminder_%' OR r.kind = 'cancellation'))
	AND NOT EXISTS (SELECT 1 FROM booking_intents b WHERE b.workflow_id = c.reference AND b.channel = 'agent')`

// changeDone reports whether a change's effect is in the rows.
func changeDone(a *appliedChange, rows changeRows) bool {
	switch {
	case a.change.Kind == CancelEarly:
		m, ok := rows.byRef[a.workflowID+"|cancellation"]
		return rows.activeOf[a.workflowID] == 0 && (!ok || m.state != "pending")
	case a.change.Kind.cancels():
		m, ok := rows.byRef[a.workflowID+"|cancellation"]
		return ok && m.state != "pending" && rebookDone(a, rows)
	case a.change.Kind == MoveBack && !rebookDone(a, rows):
		return false
	}
	return a.refused || (rows.active[activeKey(a.workflowID, a.change.To)] == 1 &&
		rows.active[activeKey(a.workflowID, a.wish.Start)] == 0)
}

// rebookDone reports whether a rebook's second wish (if it went out) has
// its new booking confirmed and told.
func rebookDone(a *appliedChange, rows changeRows) bool {
	if a.again.sentAt.IsZero() {
		return true
	}
	for _, fam := range rows.confirmedAt[wishKey(a.scenario.Customer, a.wish.Service, a.wish.Start)] {
		if fam != a.workflowID && rows.atTwilio[fam+"|confirmation"] > 0 {
			return true
		}
	}
	return false
}

// summary is the changes' lines of the report's summary.
func (c ChangeReport) summary(b *strings.Builder) {
	k := c.Checks
	fmt.Fprintf(b, "changes (%s): cancels %d of %d planned, reschedules %d of %d, rebooks %d of %d, move-backs %d of %d, early cancels %d of %d; duplicated %s; %d posts, answers %s, unanswered %d\n",
		c.Mode, c.Sent[Cancel], c.Planned[Cancel], c.Sent[Reschedule], c.Planned[Reschedule], c.Sent[Rebook], c.Planned[Rebook],
		c.Sent[MoveBack], c.Planned[MoveBack], c.Sent[CancelEarly], c.Planned[CancelEarly], dupLine(c.Duplicated), c.Posts, intLine(c.Answers), c.Unanswered)
	r, e := k.Rebooks, k.Early
	fmt.Fprintf(b, "rebooks: second wishes sent %d (skipped %d; %d while the cancel was under way, %d told it is being cancelled), rebooked %d, in review %d, false answers %d, lost %d\n",
		r.Sent, r.Skipped, r.WhileCancelling, r.ToldEnding, r.Rebooked, r.InReview, r.FalseAnswers, r.Lost)
	fmt.Fprintf(b, "early cancels: aimed %s, seen %s; carried out in the saga %d, after the confirmation %d, in review %d, not carried out %d, deposits held %d, unanswered %d\n",
		phaseLine(e.Aimed), phaseLine(e.Seen), e.InSaga, e.AfterConfirmation, e.InReview, e.NotCarriedOut, e.DepositsHeld, e.Unanswered)
	fmt.Fprintf(b, "change effects: cancelled %d (deposit refunded %d, kept %d, either side of the window %d), moved %d, refused %d, without effect %d; double refunds %d, refunds on kept deposits %d, missing refunds %d, orphaned holds %d\n",
		k.Cancelled, k.Refunded, k.Kept, k.EitherSide, k.Moved, k.Refused, k.WithoutEffect, k.DoubleRefunds, k.RefundsOnKept, k.MissingRefunds, k.OrphanedHolds)
	fmt.Fprintf(b, "reminders sent per offset: %s; after a cancellation %d, due but missing %d, twice %d; cancellation messages %d (cancelled bookings without exactly one %d, for bookings nobody cancelled %d)\n",
		intLine(k.RemindersByOffset), k.RemindersAfterCancel, k.RemindersMissing, k.RemindersExtra, k.CancellationMessages, k.CancellationsNotOne, k.UnexpectedCancels)
}

func phaseLine(m map[SagaPhase]int) string {
	s := map[string]int{}
	for k, v := range m {
		s[string(k)] = v
	}
	return intLine(s)
}

func dupLine(m map[Duplication]int) string {
	s := map[string]int{}
	for k, v := range m {
		s[string(k)] = v
	}
	return intLine(s)
}
