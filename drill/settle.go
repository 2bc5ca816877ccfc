package drill

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/enums/v1"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// Outcome is how one wish ended.
type Outcome string

// The outcomes of a wish. Pending and Lost are failures once the drill
// has settled: an accepted request must end somewhere a person can see.
const (
	Confirmed Outcome = "confirmed"
	Rejected  Outcome = "rejected"
	InReview  Outcome = "in_review"
	Pending   Outcome = "pending"
)

// wishState is what the drill knows about one wish.
type wishState struct {
	scenario   Scenario
	wish       int
	workflowID string
	outcome    Outcome
	reason     string
}

// conversationID is the customer's conversation as the gateway names it:
// by the customer's key, which the drill computes from its own scenario
// data (the ID no longer shows the number). A number the keyer refuses
// (none of the drill's) names no conversation.
func (e *env) conversationID(s Scenario) string {
	if e.tc == nil {
		return "" // a checks fixture without a stack
	}
	key, err := e.cfg.CustomerKeys().Key(s.tenant(), s.Customer)
	if err != nil {
		return ""
	}
	return conversation.WorkflowID(s.tenant(), key)
}

func wishKey(customer, service string, start time.Time) string {
	return customer + "|" + service + "|" + start.UTC().Format(time.RFC3339)
}

// operate plays the person at the ops page: a potential duplicate of an
// ambiguous scenario is resolved "separate" (the customer meant both).
// Other review cases stay open: they are findings of the report.
func (e *env) operate(ctx context.Context, byConversation map[string]Scenario) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	token, _ := e.cfg.TokenFor(config.DefaultTenant)
	resolved := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rows, err := e.pool.Query(ctx, `SELECT id, workflow_id FROM review_cases WHERE status = 'open' AND reason = $1`, string(review.ReasonPotentialDuplicate))
		if err != nil {
			continue
		}
		var todo []string
		for rows.Next() {
			var id, wf string
			if rows.Scan(&id, &wf) == nil && !resolved[id] {
				if meantBoth(byConversation[wf]) {
					todo = append(todo, id)
				}
			}
		}
		rows.Close()
		for _, id := range todo {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.staffURL+"/v1/review-cases/"+id+"/resolve", strings.NewReader(`{"action":"separate"}`))
			if err != nil {
				continue
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					resolved[id] = true
				}
			}
		}
	}
}

// meantBoth reports whether a potential duplicate of s's conversation is
// two bookings the customer meant: the same service twice on one day, or
// the old slot asked for again after a move.
func meantBoth(s Scenario) bool {
	return s.Kind == Ambiguous || s.Change != nil && s.Change.Kind == MoveBack
}

// bookingIntents maps each wish key to the workflow IDs of its booking
// intents, newest first.
func (e *env) bookingIntents(ctx context.Context) (map[string][]string, error) {
	intents := map[string][]string{}
	rows, err := e.pool.Query(ctx, `SELECT customer, service, slot_start, workflow_id FROM booking_intents ORDER BY created_at DESC`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var c, s, wf string
		var start time.Time
		if err := rows.Scan(&c, &s, &start, &wf); err != nil {
			rows.Close()
			return nil, err
		}
		intents[wishKey(c, s, start)] = append(intents[wishKey(c, s, start)], wf)
	}
	rows.Close()
	return intents, nil
}

// outcomes classifies every wish from what the downstream systems hold:
// a confirmed reservation whose confirmation reached Twilio, a review case,
// or (asked of Temporal only when few remain) a closed appointment.
func (e *env) outcomes(ctx context.Context, all []Scenario, askTemporal bool) ([]wishState, error) {
	intents, err := e.bookingIntents(ctx)
	if err != nil {
		return nil, err
	}
	confirmed, err := e.stringSet(ctx, `SELECT r.reference FROM calendar_reservations r JOIN outbox_messages m
		ON m.reference = r.reference AND m.kind = 'confirmation' AND m.state IN ('sent', 'delivered') WHERE r.status = 'confirmed'`)
	if err != nil {
		return nil, err
	}
	// A case the payment child opened belongs to its appointment.
	openCases, err := e.stringSet(ctx, `SELECT regexp_replace(workflow_id, '^payment:', '') FROM review_cases WHERE status = 'open'`)
	if err != nil {
		return nil, err
	}
	messagesInReview, err := e.stringSet(ctx, `SELECT reference FROM outbox_messages WHERE kind = 'confirmation' AND state = 'review'`)
	if err != nil {
		return nil, err
	}
	// An early cancel's booking was confirmed first when its confirmation
	// reached the customer, or was committed and its confirmation taken
	// back because the cancel reached it first (the lifecycle cancelled
	// it: judged as a cancel after the confirmation).
	told, err := e.stringSet(ctx, `SELECT reference FROM outbox_messages WHERE kind = 'confirmation' AND state IN ('sent', 'delivered', 'withdrawn')`)
	if err != nil {
		return nil, err
	}
	// A loser of a contended slot ends with the free slots offered.
	offered, err := e.stringSet(ctx, `SELECT reference FROM outbox_messages WHERE kind = 'alternatives' AND state IN ('sent', 'delivered')`)
	if err != nil {
		return nil, err
	}
	var out []wishState
	for _, s := range all {
		for i, w := range s.Wishes {
			st := wishState{scenario: s, wish: i, outcome: Pending}
			wfs := intents[wishKey(s.Customer, w.Service, w.Start)]
			if wf := e.changes.workflowOf(s.ID); wf != "" && i == 0 {
				wfs = []string{wf} // the booking changed (a rebook's is judged apart)
			}
			switch {
			case len(wfs) == 0 && openCases[e.conversationID(s)]:
				st.outcome, st.reason = InReview, "potential duplicate waiting for a person"
			case len(wfs) == 0:
				st.reason = "no booking intent recorded"
			case confirmed[wfs[0]] || e.changes.applied(wfs[0], told[wfs[0]]):
				// A booking the customer then cancelled or moved was
				// confirmed first (its change is sent only then; an early
				// cancel's, if its confirmation was told).
				st.workflowID, st.outcome = wfs[0], Confirmed
			case offered[wfs[0]]:
				st.workflowID, st.outcome, st.reason = wfs[0], Rejected, "slot_unavailable (alternatives offered)"
			case openCases[wfs[0]] || messagesInReview[wfs[0]]:
				st.workflowID, st.outcome, st.reason = wfs[0], InReview, "unknown outcome waiting for a person"
			default:
				st.workflowID = wfs[0]
				if askTemporal {
					st.outcome, st.reason = e.closedOutcome(ctx, wfs[0])
				}
			}
			out = append(out, st)
		}
	}
	return out, nil
}

// closedOutcome asks Temporal how a (not confirmed) appointment ended.
func (e *env) closedOutcome(ctx context.Context, workflowID string) (Outcome, string) {
	d, err := e.tc.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		return Pending, fmt.Sprintf("describe: %v", err)
	}
	if d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return Pending, "appointment still running"
	}
	st, err := appointment.StatusOf(ctx, e.tc, workflowID)
	if err != nil {
		return Pending, fmt.Sprintf("status query: %v", err)
	}
	switch st.Status {
	case workflows.StatusConfirmed:
		return Pending, "confirmed, confirmation not sent"
	case workflows.StatusNeedsReview:
		return InReview, st.Reason
	}
	return Rejected, strings.TrimSpace(string(st.Status) + " " + st.Reason)
}

func (e *env) stringSet(ctx context.Context, sql string) (map[string]bool, error) {
	rows, err := e.pool.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	list, err := pgx.CollectRows(rows, pgx.RowTo[string])
	out := make(map[string]bool, len(list))
	for _, s := range list {
		out[s] = true
	}
	return out, err
}

// askPerRound bounds the appointments asked of Temporal in one settle
// round: most end confirmed, which the database shows without a query,
// and a query of a closed run replays its history on a worker.
const askPerRound = 60

// endedAppointments remembers how closed appointments ended (a closed run
// does not change), so each is asked of Temporal once.
type endedAppointments map[string]wishState

// ask fills in the open wishes' outcomes from Temporal: those known, and
// up to askPerRound new ones (an appointment that ended without a trace
// in the database, say a failed payment, is found even when many did).
func (a endedAppointments) ask(ctx context.Context, e *env, states []wishState, open []int) {
	asked := 0
	for _, i := range open {
		id := states[i].workflowID
		if id == "" {
			continue
		}
		if st, ok := a[id]; ok {
			states[i].outcome, states[i].reason = st.outcome, st.reason
			continue
		}
		if asked == askPerRound {
			continue
		}
		asked++
		states[i].outcome, states[i].reason = e.closedOutcome(ctx, id)
		if states[i].outcome != Pending {
			a[id] = states[i]
		}
	}
}

// settle waits until every wish has ended and nothing waits in the inbox
// or the outbox, or until the deadline.
func (e *env) settle(ctx context.Context, all []Scenario, timeout time.Duration, progress func(string, ...any)) ([]wishState, error) {
	deadline := time.Now().Add(timeout)
	lastNote := time.Now()
	ended := endedAppointments{}
	for {
		states, err := e.outcomes(ctx, all, false)
		if err != nil {
			return nil, err
		}
		var open []int
		for i, st := range states {
			if st.outcome == Pending {
				open = append(open, i)
			}
		}
		ended.ask(ctx, e, states, open)
		waiting := 0
		for _, st := range states {
			if st.outcome == Pending {
				waiting++
			}
		}
		busy, err := e.count(ctx, `SELECT (SELECT count(*) FROM inbox_events WHERE state = 'pending') + (SELECT count(*) FROM outbox_messages WHERE state = 'pending')`)
		if err != nil {
			return nil, err
		}
		if waiting == 0 && busy == 0 {
			return states, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			// The final word: Temporal is asked about every open wish; the
			// report counts what is still pending as lost.
			return e.outcomes(ctx, all, true)
		}
		if time.Since(lastNote) > 10*time.Second {
			progress("settling: %d wishes not ended, %d inbox/outbox rows pending", waiting, busy)
			lastNote = time.Now()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
