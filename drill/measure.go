package drill

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// unknowns follows every injected "after commit" fault to how it ended:
// the same key came back and got the stored answer (replayed), the caller
// found the effect by its business reference or the outbox by listing
// Twilio (reconciled), or a person was asked (review).
func (e *env) unknowns(ctx context.Context, all []exchange) (Unknowns, error) {
	u := Unknowns{Ended: map[string]int{}}
	ev, err := e.unknownEvidence(ctx)
	if err != nil {
		return u, err
	}
	var took []time.Duration
	for i, x := range all {
		if (x.Fault != chaos.DropAfterCommit && x.Fault != chaos.ErrorAfterCommit) || !x.Committed() || x.Method != "POST" {
			continue
		}
		u.Total++
		ended, d, timed := ev.ending(all, i)
		if timed {
			took = append(took, d)
		}
		u.Ended[ended]++
		if ended == "unresolved" && len(u.Unresolved) < 10 {
			u.Unresolved = append(u.Unresolved, fmt.Sprintf("%s %s %s %s (%d)", x.upstream, x.Method, x.Path, x.operation(), x.UpstreamStatus))
		}
	}
	u.SecondsToEnd = spread(took)
	return u, nil
}

// unknownEvidence is what the database says about the operations whose
// answer was lost.
type unknownEvidence struct {
	reviewed   map[string]bool   // workflow IDs with an unknown-outcome review case
	holdRefs   map[string]string // hold ID -> booking reference
	intentRefs map[string]string // payment intent ID -> booking reference
	sentAs     map[string]string // outbox row ID -> "provider_id|state"
}

// unknownEvidence reads the review cases, the holds' and intents'
// references and the outbox rows' provider IDs and states.
func (e *env) unknownEvidence(ctx context.Context) (unknownEvidence, error) {
	var ev unknownEvidence
	var err error
	if ev.reviewed, err = e.stringSet(ctx, `SELECT workflow_id FROM review_cases WHERE reason = 'unknown_outcome'`); err != nil {
		return ev, err
	}
	if ev.holdRefs, err = e.pairs(ctx, `SELECT id, reference FROM calendar_reservations`); err != nil {
		return ev, err
	}
	if ev.intentRefs, err = e.pairs(ctx, `SELECT id, coalesce(booking_reference, '') FROM payment_intents`); err != nil {
		return ev, err
	}
	if ev.sentAs, err = e.pairs(ctx, `SELECT id, coalesce(provider_id, '') || '|' || state FROM outbox_messages`); err != nil {
		return ev, err
	}
	return ev, nil
}

// ending is how the lost answer of all[i] ended: replayed, reconciled,
// review or unresolved. When a later request ended it, timed is true and
// took is how long after the fault that request came.
func (ev unknownEvidence) ending(all []exchange, i int) (ended string, took time.Duration, timed bool) {
	x := all[i]
	if x.upstream == upstreamTwilio {
		sid, state, _ := strings.Cut(ev.sentAs[x.outboxID()], "|")
		switch {
		case sid == x.responseID():
			return "reconciled", 0, false
		case state == "review":
			return "review", 0, false
		default:
			return "unresolved", 0, false
		}
	}
	if x.IdempotencyKey == "" {
		return ev.redelivered(all, i)
	}
	for _, later := range all[i+1:] {
		if later.upstream == x.upstream && later.IdempotencyKey == x.IdempotencyKey && later.Replayed {
			return "replayed", later.at.Sub(x.at), true
		}
		if later.upstream == x.upstream && later.operation() == x.operation() && later.IdempotencyKey != x.IdempotencyKey && later.Committed() {
			return "reconciled", later.at.Sub(x.at), true // a new key, answered from the business reference
		}
	}
	if took, ok := readBack(all, i); ok {
		return "reconciled", took, true // looked up by reference, found
	}
	ref := x.reference()
	if ref == "" {
		id := x.responseID()
		ref = ev.holdRefs[id] + ev.intentRefs[id]
	}
	if ev.reviewed[ref] {
		return "review", 0, false
	}
	return "unresolved", 0, false
}

// readBack reports whether a later read of the same upstream (a lookup
// by the business reference: the saga's FindHold or FindDeposit) answered
// the caller with the object whose answer all[i] lost, and how long after.
func readBack(all []exchange, i int) (took time.Duration, ok bool) {
	x := all[i]
	id := x.responseID()
	if id == "" {
		return 0, false
	}
	needle := []byte(`"id":"` + id + `"`)
	for _, later := range all[i+1:] {
		if later.upstream == x.upstream && later.Method == "GET" && later.Committed() && !answerLost(later.Fault) &&
			bytes.Contains(later.Response, needle) {
			return later.at.Sub(x.at), true
		}
	}
	return 0, false
}

// redelivered ends a lost answer of a protocol without Idempotency-Key (a
// webhook delivery, a post of the payment page's form): the sender tries
// the same thing again and the receiver's own dedup answers it (the
// gateway's inbox by event ID, the session's state on the page).
func (ev unknownEvidence) redelivered(all []exchange, i int) (ended string, took time.Duration, timed bool) {
	x := all[i]
	for _, earlier := range all[:i] {
		// The payment API's deliberate second delivery
		// (STRIPE_WEBHOOK_DELIVER_TWICE) follows one already answered:
		// losing its answer leaves the sender nothing unknown.
		if earlier.upstream == x.upstream && earlier.operation() == x.operation() && earlier.Committed() && !answerLost(earlier.Fault) {
			return "duplicate", 0, false
		}
	}
	for _, later := range all[i+1:] {
		if later.upstream == x.upstream && later.operation() == x.operation() && later.UpstreamStatus != 0 {
			return "redelivered", later.at.Sub(x.at), true
		}
	}
	return "unresolved", 0, false
}

// answerLost reports whether a fault kept the upstream's answer from the
// caller.
func answerLost(f chaos.Fault) bool {
	return f == chaos.DropAfterCommit || f == chaos.ErrorAfterCommit || f == chaos.Reset
}

func (e *env) pairs(ctx context.Context, sql string, args ...any) (map[string]string, error) {
	rows, err := e.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	type pair struct{ K, V string }
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[pair])
	out := make(map[string]string, len(list))
	for _, p := range list {
		out[p.K] = p.V
	}
	return out, err
}

// reviewCases counts review cases by reason, with how long the resolved
// ones waited for their decision.
func (e *env) reviewCases(ctx context.Context) (map[string]Cases, error) {
	rows, err := e.pool.Query(ctx, `SELECT reason, status, created_at, coalesce(resolved_at, created_at) FROM review_cases`)
	if err != nil {
		return nil, err
	}
	type row struct {
		Reason, Status   string
		Opened, Resolved time.Time
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return nil, err
	}
	out := map[string]Cases{}
	waits := map[string][]time.Duration{}
	for _, r := range list {
		c := out[r.Reason]
		c.Opened++
		if r.Status == "open" {
			c.Open++
		} else {
			c.Resolved++
			waits[r.Reason] = append(waits[r.Reason], r.Resolved.Sub(r.Opened))
		}
		out[r.Reason] = c
	}
	for reason, w := range waits {
		c := out[reason]
		c.SecondsToResolve = spread(w)
		out[reason] = c
	}
	// A message whose send stayed unknown after reconciliation waits in
	// the outbox for a person: a review case of its own kind.
	var c Cases
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM outbox_messages WHERE state = 'review'`).Scan(&c.Opened); err != nil {
		return nil, err
	}
	if c.Opened > 0 {
		c.Open = c.Opened
		out["outbox_send_unconfirmed"] = c
	}
	return out, nil
}

// genuine measures false merges on the scenarios that must book twice,
// and true merges on those that must book once.
func (e *env) genuine(ctx context.Context, all []Scenario, states []wishState) (Genuine, error) {
	merges, err := e.pairs(ctx, `SELECT b.customer, count(*)::text FROM dedup_decisions d
		JOIN booking_intents b ON b.tenant_id = d.tenant_id AND b.intent_id = d.intent_id WHERE d.decision = 'merge' GROUP BY b.customer`)
	if err != nil {
		return Genuine{}, err
	}
	reviewed, err := e.stringSet(ctx, `SELECT workflow_id FROM review_cases WHERE reason = 'potential_duplicate'`)
	if err != nil {
		return Genuine{}, err
	}
	confirmed := map[string]int{}
	for _, st := range states {
		if st.outcome == Confirmed {
			confirmed[st.scenario.Customer]++
		}
	}
	var g Genuine
	for _, s := range all {
		merged := merges[s.Customer] != "" && merges[s.Customer] != "0"
		switch s.Kind {
		case Second, Ambiguous:
			g.Scenarios++
			if confirmed[s.Customer] == 2 {
				g.BookedBoth++
			}
			if merged {
				g.Merged++
			}
			if reviewed[e.conversationID(s)] {
				g.ReviewedFirst++
			}
		case CrossChannel, Rephrase:
			g.ExpectedMerges++
			if merged {
				g.MergedAsExpect++
			}
		}
	}
	if g.Scenarios > 0 {
		g.FalseDedupRate = float64(g.Merged) / float64(g.Scenarios)
	}
	return g, nil
}

// resultIDs checks that the saga stored the ID of every effect it caused
// (hold, deposit, confirmation), and the outbox the SID of every message
// Twilio accepted.
func (e *env) resultIDs(ctx context.Context, states []wishState) (ResultIDs, error) {
	var r ResultIDs
	if err := e.sagaResultIDs(ctx, states, &r); err != nil {
		return r, err
	}
	if err := e.outboxResultIDs(ctx, &r); err != nil {
		return r, err
	}
	r.Share = 1
	if r.Effects > 0 {
		r.Share = float64(r.Stored) / float64(r.Effects)
	}
	return r, nil
}

// count counts one effect, stored if its ID is where it belongs; a
// missing one is described (the first ten are kept).
func (r *ResultIDs) count(stored bool, format string, a ...any) {
	r.Effects++
	if stored {
		r.Stored++
	} else if len(r.Missing) < 10 {
		r.Missing = append(r.Missing, fmt.Sprintf(format, a...))
	}
}

// sagaResultIDs counts, for every confirmed booking, whether the saga
// holds the IDs of the hold, deposit and confirmation it caused.
func (e *env) sagaResultIDs(ctx context.Context, states []wishState, r *ResultIDs) error {
	holds, err := e.pairs(ctx, `SELECT reference, id FROM calendar_reservations WHERE status = 'confirmed'`)
	if err != nil {
		return err
	}
	deposits, err := e.pairs(ctx, `SELECT booking_reference, id FROM payment_intents WHERE status = 'succeeded'`)
	if err != nil {
		return err
	}
	confirmations, err := e.pairs(ctx, `SELECT reference, id FROM outbox_messages WHERE kind = 'confirmation'`)
	if err != nil {
		return err
	}
	for _, st := range states {
		if st.outcome != Confirmed {
			continue
		}
		s, err := appointment.StatusOf(ctx, e.tc, st.workflowID)
		if err != nil {
			return fmt.Errorf("status of %s: %w", st.workflowID, err)
		}
		hold := holds[st.workflowID]
		if e.changes.applied(st.workflowID, true) {
			hold = "" // cancelled or moved: the calendar's row is no longer the saga's
		}
		for _, c := range []struct{ what, effect, stored string }{
			{"hold", hold, s.HoldID}, {"deposit", deposits[st.workflowID], s.IntentID}, {"confirmation", confirmations[st.workflowID], s.MessageID},
		} {
			if c.effect == "" {
				continue
			}
			r.count(c.effect == c.stored, "%s %s of %s: saga holds %q", c.what, c.effect, st.workflowID, c.stored)
		}
	}
	return nil
}

// outboxResultIDs counts, for every message Twilio accepted, whether its
// outbox row holds its SID.
func (e *env) outboxResultIDs(ctx context.Context, r *ResultIDs) error {
	sids, err := e.pairs(ctx, `SELECT id, coalesce(provider_id, '') FROM outbox_messages`)
	if err != nil {
		return err
	}
	for _, m := range e.twilio.Messages() {
		// A message that names no outbox row is stored nowhere: missing.
		id := callbackOutboxID(m.StatusCallback)
		r.count(id != "" && sids[id] == m.Sid, "message %s of outbox row %s: row holds %q", m.Sid, id, sids[id])
	}
	return nil
}

// blocked sums bookonce_duplicates_blocked_total by layer over the
// in-process services, plus dedup merges from the database (the workers'
// counters die with their processes).
func (e *env) blocked(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for _, g := range e.gatherers {
		families, err := g.Gather()
		if err != nil {
			return nil, err
		}
		for _, f := range families {
			if f.GetName() != "bookonce_duplicates_blocked_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				out[label(m, "layer")] += m.GetCounter().GetValue()
			}
		}
	}
	merges, err := e.count(ctx, `SELECT count(*) FROM dedup_decisions WHERE decision = 'merge'`)
	if err != nil {
		return nil, err
	}
	out["dedup"] = float64(merges)
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
