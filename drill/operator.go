package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/bookonce/bookonce/internal/mask"
)

// operatorLimit is the share of bookings that may need a person for a
// reason other than a genuinely ambiguous duplicate.
const operatorLimit = 0.005

// OperatorLoad is what the drill left for a person to do.
type OperatorLoad struct {
	// Tasks are review cases (open or decided) and outbox messages
	// waiting for a decision; Ambiguous those that are potential
	// duplicates of an ambiguous-second scenario (a person must decide
	// those; the drill's operator did). NeedPerson = Tasks - Ambiguous.
	Tasks     int `json:"tasks"`
	Ambiguous int `json:"ambiguous_duplicates"`
	// StaffConflicts are calendar_conflict cases of an appointment the
	// drill's staff entered over a booking made before it: a person's
	// work by design, which bookonce did not cause.
	StaffConflicts int            `json:"staff_conflicts"`
	NeedPerson     int            `json:"need_person"`
	Share          float64        `json:"share_of_bookings"`
	Limit          float64        `json:"limit"`
	ByReason       map[string]int `json:"by_reason"`
	// InReview lists every booking left in review with its reason.
	InReview []string `json:"in_review"`
	// Cases names each task that needed a person: its reason, workflow
	// and details (situation, error), numbers masked, so that a drill
	// over its limit says what the machine could not settle.
	Cases []string `json:"cases"`
}

// operatorLoad counts the person's tasks and lists the bookings left in
// review. A potential duplicate is "genuinely ambiguous" only for the
// scenarios built to be (the same service twice on one day, the old slot
// again after a move: meantBoth); the same
// case on a rephrasing or a contended slot is a task the machine caused.
func (e *env) operatorLoad(ctx context.Context, byConversation map[string]Scenario, states []wishState) (OperatorLoad, error) {
	l := OperatorLoad{Limit: operatorLimit, ByReason: map[string]int{}, InReview: []string{}}
	cases, err := e.pool.Query(ctx, `SELECT workflow_id, reason, details::text FROM review_cases
		UNION ALL SELECT reference, 'outbox_send_unconfirmed:' || kind, coalesce(last_error, '') FROM outbox_messages WHERE state = 'review'`)
	if err != nil {
		return l, fmt.Errorf("operator tasks: %w", err)
	}
	reasons := map[string][]string{} // workflow or conversation ID -> reasons
	for cases.Next() {
		var wf, reason, details string
		if err := cases.Scan(&wf, &reason, &details); err != nil {
			cases.Close()
			return l, err
		}
		l.Tasks++
		if reason == "potential_duplicate" && meantBoth(byConversation[wf]) {
			l.Ambiguous++
		} else if reason == "calendar_conflict" && staffConflict(details) {
			l.StaffConflicts++
		} else if reason != "potential_duplicate" {
			l.Cases = append(l.Cases, mask.Phones(fmt.Sprintf("%s on %s: %s", reason, wf, details)))
		}
		short, _, _ := strings.Cut(reason, ":")
		l.ByReason[short]++
		reasons[wf] = append(reasons[wf], reason)
	}
	cases.Close()
	if err := cases.Err(); err != nil {
		return l, err
	}
	l.NeedPerson = l.Tasks - l.Ambiguous - l.StaffConflicts
	if n := len(states); n > 0 {
		l.Share = float64(l.NeedPerson) / float64(n)
	}
	for _, st := range states {
		if st.outcome != InReview {
			continue
		}
		why := strings.Join(append(reasons[st.workflowID], reasons[e.conversationID(st.scenario)]...), ", ")
		if why == "" {
			why = st.reason
		}
		l.InReview = append(l.InReview, fmt.Sprintf("%s %s wish %d (%s): %s", st.scenario.Kind, mask.Phones(st.scenario.Customer), st.wish+1, st.workflowID, why))
	}
	sort.Strings(l.InReview)
	return l, nil
}

// staffConflict reports whether a calendar_conflict case's event is one
// the drill's staff entered.
func staffConflict(details string) bool {
	var d struct {
		EventUID string `json:"event_uid"`
	}
	return json.Unmarshal([]byte(details), &d) == nil && strings.HasPrefix(d.EventUID, staffUIDPrefix)
}

// running reports whether the workflow named by a business reference is
// still running; a missing one is not.
func (e *env) running(ctx context.Context, workflowID string) (bool, error) {
	if workflowID == "" {
		return false, nil
	}
	d, err := e.tc.DescribeWorkflowExecution(ctx, workflowID, "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("describe %s: %w", workflowID, err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// measureStrict adds the checks that look past the constraints: resources
// double-booked, the contended slots, the operator's load and orphans.
func (e *env) measureStrict(ctx context.Context, opts Options, r *Report, all []Scenario, states []wishState) error {
	var err error
	if r.DoubleBooked, err = e.doubleBooked(ctx); err != nil {
		return err
	}
	if r.DecisionWaits, err = e.decisionWaits(ctx, opts.Crashes); err != nil {
		return err
	}
	texts := map[string][]string{}
	for _, m := range e.twilio.Messages() {
		to := strings.TrimPrefix(m.To, "whatsapp:")
		texts[to] = append(texts[to], m.Body)
	}
	r.Contention = contentionOf(states, texts, e.cfg.Timezone)
	if r.Operator, err = e.operatorLoad(ctx, e.byConversation(all), states); err != nil {
		return err
	}
	r.Orphans, err = e.orphans(ctx, opts.OrphanWait)
	return err
}
