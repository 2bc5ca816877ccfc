package drill

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// ChangeChecks are what the cancels and reschedules left in the calendar,
// at the payment API and at the customer's phone, counted from the rows
// and the fake Twilio, never from what a workflow believes. Every count
// but the tallies must be 0.
type ChangeChecks struct {
	// Cancelled and Moved are changes whose effect is in the calendar;
	// Refused reschedules were answered slot_unavailable.
	Cancelled int `json:"cancelled"`
	Moved     int `json:"moved"`
	Refused   int `json:"refused"`
	// WithoutEffect are changes sent for a confirmed booking that changed
	// nothing: a customer's cancel or move lost.
	WithoutEffect int `json:"without_effect"`
	// Refunded and Kept tally the deposits of cancelled bookings;
	// EitherSide those whose cancel arrived so near the window's end that
	// both are right.
	Refunded   int `json:"refunded"`
	Kept       int `json:"kept"`
	EitherSide int `json:"either_side"`
	// DoubleRefunds are payment intents (any, not only the drill's) with
	// more than one refund or more refunded than captured.
	DoubleRefunds int `json:"double_refunds"`
	// RefundsOnKept are refunds of deposits that had to stay: a cancel
	// inside the cancellation window, or a move.
	RefundsOnKept int `json:"refunds_on_kept_deposits"`
	// MissingRefunds are free cancels whose captured deposit was not
	// refunded.
	MissingRefunds int `json:"missing_refunds"`
	// OrphanedHolds are cancelled bookings with a held or confirmed
	// reservation left, and moved bookings without exactly one (at the
	// new slot).
	OrphanedHolds int `json:"orphaned_holds"`
	// RemindersByOffset counts reminders at Twilio per offset.
	RemindersByOffset map[string]int `json:"reminders_by_offset"`
	// RemindersAfterCancel are reminders a booking's cancellation preceded.
	RemindersAfterCancel int `json:"reminders_after_cancel"`
	// RemindersMissing: a booking kept (not cancelled) without a reminder
	// that was due; RemindersExtra: more than one per booking and offset.
	RemindersMissing int `json:"reminders_missing"`
	RemindersExtra   int `json:"reminders_extra"`
	// CancellationMessages are cancellation messages at Twilio; NotOne the
	// cancelled bookings without exactly one, Unexpected those of bookings
	// nobody cancelled.
	CancellationMessages int `json:"cancellation_messages"`
	CancellationsNotOne  int `json:"cancellations_not_one_message"`
	UnexpectedCancels    int `json:"unexpected_cancellation_messages"`
	// Rebooks judge the second wishes of rebooks; Early the cancels sent
	// while the saga ran.
	Rebooks  RebookChecks `json:"rebooks"`
	Early    EarlyChecks  `json:"early_cancels"`
	Examples []string     `json:"examples,omitempty"`
}

// example keeps one finding's description (the first ten).
func (c *ChangeChecks) example(format string, a ...any) {
	if len(c.Examples) < 10 {
		c.Examples = append(c.Examples, mask.Phones(fmt.Sprintf(format, a...)))
	}
}

// failures are the checks' findings.
func (c ChangeChecks) failures() []string {
	var out []string
	for _, f := range []struct {
		n    int
		what string
	}{
		{c.WithoutEffect, "changes of confirmed bookings without effect"},
		{c.DoubleRefunds, "payment intents refunded twice or beyond the capture"},
		{c.RefundsOnKept, "refunds of deposits that had to stay (late cancel or move)"},
		{c.MissingRefunds, "free cancels without their refund"},
		{c.OrphanedHolds, "changed bookings with a wrong number of active reservations"},
		{c.RemindersAfterCancel, "reminders after a cancellation"},
		{c.RemindersMissing, "reminders due but not sent"},
		{c.RemindersExtra, "reminders sent twice for one booking and offset"},
		{c.CancellationsNotOne, "cancelled bookings without exactly one cancellation message"},
		{c.UnexpectedCancels, "cancellation messages for bookings nobody cancelled"},
		{c.Rebooks.FalseAnswers, "false \"already booked / in Bearbeitung\" answers to a rebook"},
		{c.Rebooks.Lost, "rebooks without a new booking"},
		{c.Early.NotCarriedOut, "acknowledged early cancels not carried out"},
		{c.Early.DepositsHeld, "deposits captured or authorised on an early-cancelled booking"},
		{c.Early.Unanswered, "early cancels the customer got no answer to"},
	} {
		if f.n > 0 {
			out = append(out, fmt.Sprintf("%d %s", f.n, f.what))
		}
	}
	if len(out) > 0 && len(c.Examples) > 0 {
		out = append(out, fmt.Sprintf("change findings: %v", c.Examples))
	}
	return out
}

// changePolicy is the drill tenant's policy the checks judge by.
type changePolicy struct {
	window    time.Duration
	reminders []time.Duration
}

// outboxRow is an outbox row the checks read.
type outboxRow struct {
	reference, kind, state string
	created                time.Time
}

// changeRows are the rows the checks read.
type changeRows struct {
	outbox map[string]outboxRow // by ID
	// atTwilio counts messages at Twilio by reference and outbox kind.
	atTwilio map[string]int
	// byRef are the outbox rows by reference and kind.
	byRef map[string]outboxRow
	// active counts held and confirmed reservations per booking (its
	// saga: a move's reservation counts for the booking it moves) and
	// slot, activeOf per booking; confirmedAt lists the bookings with a
	// confirmed reservation per wish key.
	active      map[string]int
	activeOf    map[string]int
	confirmedAt map[string][]string
	// captured, refunds and authorised (intents still requires_capture)
	// are per booking reference.
	captured, refunds, authorised map[string]int64
}

// checkChanges measures the changes sent against the rows, the messages
// at Twilio and the policy; confirmed are the wishes confirmed.
func (e *env) checkChanges(ctx context.Context, sent []*appliedChange, confirmed []wishState, msgs []twilio.FakeMessage, pol changePolicy) (ChangeChecks, error) {
	c := ChangeChecks{RemindersByOffset: map[string]int{}}
	rows, err := e.changeRows(ctx, msgs)
	if err != nil {
		return c, err
	}
	if c.DoubleRefunds, err = e.count(ctx, `SELECT count(*) FROM (SELECT p.id FROM payment_intents p
		LEFT JOIN refunds r ON r.tenant_id = p.tenant_id AND r.payment_intent_id = p.id GROUP BY p.id, p.amount_captured, p.amount_refunded
		HAVING count(r.id) > 1 OR coalesce(sum(r.amount), 0) > p.amount_captured OR p.amount_refunded > p.amount_captured) x`); err != nil {
		return c, fmt.Errorf("double refunds: %w", err)
	}
	cases, err := e.stringSet(ctx, `SELECT workflow_id FROM review_cases WHERE status = 'open'`)
	if err != nil {
		return c, fmt.Errorf("open cases: %w", err)
	}
	cancelled := map[string]time.Time{} // reference -> its cancellation row's creation
	changed := map[string]bool{}
	for _, a := range sent {
		changed[a.workflowID] = true
		owned := cases[a.workflowID] || cases[e.conversationID(a.scenario)]
		switch {
		case a.change.Kind == CancelEarly:
			c.checkEarly(a, rows, pol, cancelled, owned, msgs)
		case a.change.Kind.cancels():
			c.checkCancel(a, rows, pol, cancelled)
		default:
			c.checkMove(a, rows)
		}
		if a.change.Kind == Rebook || a.change.Kind == MoveBack {
			c.checkRebook(a, rows, owned)
		}
	}
	for _, st := range confirmed {
		ref := st.workflowID
		if !changed[ref] && rows.atTwilio[ref+"|cancellation"] > 0 {
			c.UnexpectedCancels++
			c.example("cancellation message for %s, which nobody cancelled", ref)
		}
		c.checkReminders(st, rows, pol, cancelled)
	}
	return c, nil
}

// checkCancel checks one cancel: its effect, the reservation freed, one
// cancellation message, the deposit on the policy's side of the window.
func (c *ChangeChecks) checkCancel(a *appliedChange, rows changeRows, pol changePolicy, cancelled map[string]time.Time) {
	ref := a.workflowID
	msg, ok := rows.byRef[ref+"|cancellation"]
	if !ok {
		c.WithoutEffect++
		c.example("cancel of %s (%s): nothing cancelled (answer %q)", ref, a.scenario.Customer, a.answer)
		return
	}
	c.Cancelled++
	cancelled[ref] = msg.created
	c.CancellationMessages += rows.atTwilio[ref+"|cancellation"]
	if n := rows.atTwilio[ref+"|cancellation"]; n != 1 && msg.state != "review" {
		c.CancellationsNotOne++
		c.example("cancelled %s: %d cancellation messages at Twilio", ref, n)
	}
	if n := rows.activeOf[a.workflowID]; n > 0 {
		c.OrphanedHolds++
		c.example("cancelled %s: %d active reservations left", ref, n)
	}
	if rows.captured[ref] == 0 {
		return
	}
	// The cancel was decided between its first send and its message.
	mustRefund := a.wish.Start.Sub(msg.created) >= pol.window
	mustKeep := a.wish.Start.Sub(a.sentAt) < pol.window
	refunded := rows.refunds[ref] > 0
	switch {
	case refunded:
		c.Refunded++
	default:
		c.Kept++
	}
	if !mustRefund && !mustKeep {
		c.EitherSide++
	}
	if mustKeep && refunded {
		c.RefundsOnKept++
		c.example("late cancel of %s (%s before the slot): deposit refunded", ref, a.wish.Start.Sub(a.sentAt).Round(time.Minute))
	}
	if mustRefund && !refunded {
		c.MissingRefunds++
		c.example("free cancel of %s: deposit not refunded", ref)
	}
}

// checkMove checks one reschedule: exactly one active reservation, at the
// new slot (at the old one if refused), and the deposit kept.
func (c *ChangeChecks) checkMove(a *appliedChange, rows changeRows) {
	ref := a.workflowID
	old := rows.active[activeKey(ref, a.wish.Start)]
	moved := rows.active[activeKey(ref, a.change.To)]
	switch {
	case a.refused:
		c.Refused++
		if old != 1 || moved != 0 {
			c.OrphanedHolds++
			c.example("refused move of %s: %d active at the old slot, %d at the new", ref, old, moved)
		}
	case moved == 0 && old == 1:
		c.WithoutEffect++
		c.example("move of %s (%s): still at the old slot (answer %q)", ref, a.scenario.Customer, a.answer)
	case moved == 1 && old == 0:
		c.Moved++
	default:
		c.OrphanedHolds++
		c.example("moved %s: %d active at the old slot, %d at the new", ref, old, moved)
	}
	if rows.refunds[ref] > 0 {
		c.RefundsOnKept++
		c.example("moved %s: deposit refunded", ref)
	}
	if n := rows.atTwilio[ref+"|cancellation"]; n > 0 {
		c.UnexpectedCancels++
		c.example("moved %s: %d cancellation messages", ref, n)
	}
}

// checkReminders checks a confirmed booking's reminders: one per offset
// that was due when it was confirmed (at most one if it was cancelled),
// none after its cancellation.
func (c *ChangeChecks) checkReminders(st wishState, rows changeRows, pol changePolicy, cancelled map[string]time.Time) {
	ref := st.workflowID
	start := st.scenario.Wishes[st.wish].Start
	conf, confirmed := rows.byRef[ref+"|confirmation"]
	cancelledAt, wasCancelled := cancelled[ref]
	for _, off := range pol.reminders {
		kind := lifecycle.MessageKindReminder + off.String()
		// A moved booking's reminders for its new time are kinds of their
		// own (one per move): one each is right, none at all is missing.
		total, extra := 0, false
		for _, k := range reminderKinds(kind) {
			n := rows.atTwilio[ref+"|"+k]
			total += n
			extra = extra || n > 1
		}
		c.RemindersByOffset[off.String()] += total
		row, exists := rows.byRef[ref+"|"+kind]
		switch {
		case extra:
			c.RemindersExtra++
			c.example("%s: %d reminders %s", ref, total, off)
		case total == 0 && remindable(st.scenario) && !wasCancelled && confirmed && !start.Add(-off).After(conf.created) && row.state != "review" &&
			(row.state != "suppressed" || !st.scenario.Stop): // held back after the customer's STOP: right
			c.RemindersMissing++
			c.example("%s: reminder %s due, not sent (its messages: %s)", ref, off, rows.kindsOf(ref))
		}
		if exists && wasCancelled && row.created.After(cancelledAt) {
			c.RemindersAfterCancel++
			c.example("%s: reminder %s after its cancellation", ref, off)
		}
	}
}

// reminderKinds are the outbox kinds of one offset's reminder: before any
// move, and after each of up to maxMoves moves.
func reminderKinds(kind string) []string {
	out := []string{kind}
	for m := 1; m <= maxMoves; m++ {
		out = append(out, kind+"_move_"+strconv.Itoa(m))
	}
	return out
}

// maxMoves bounds the moves of one booking the reminder check looks at;
// the drill moves a booking at most once (a refused move counts too).
const maxMoves = 3

// remindable reports whether a booking's lifecycle carries the worker's
// REMINDER_LEAD: the conversation's bookings get it in the terms the
// worker resolves; an agent's booking carries the terms the agent tools
// resolve, without it, so its reminders are not due within the drill.
func remindable(s Scenario) bool { return s.Kind != Agent }

// changeRows reads the outbox, the reservations and the money the checks
// need, and maps the messages at Twilio to their outbox rows.
func (e *env) changeRows(ctx context.Context, msgs []twilio.FakeMessage) (changeRows, error) {
	r := changeRows{outbox: map[string]outboxRow{}, atTwilio: map[string]int{}, byRef: map[string]outboxRow{},
		active: map[string]int{}, activeOf: map[string]int{}, confirmedAt: map[string][]string{},
		captured: map[string]int64{}, refunds: map[string]int64{}, authorised: map[string]int64{}}
	rows, err := e.pool.Query(ctx, `SELECT id, reference, kind, state, created_at FROM outbox_messages
		WHERE kind IN ('cancellation', 'confirmation') OR kind LIKE 'reminder\_%'`)
	if err != nil {
		return r, fmt.Errorf("outbox rows: %w", err)
	}
	type row struct {
		ID, Reference, Kind, State string
		Created                    time.Time
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return r, fmt.Errorf("outbox rows: %w", err)
	}
	for _, o := range list {
		or := outboxRow{reference: o.Reference, kind: o.Kind, state: o.State, created: o.Created}
		r.outbox[o.ID], r.byRef[o.Reference+"|"+o.Kind] = or, or
	}
	for _, m := range msgs {
		if o, ok := r.outbox[callbackOutboxID(m.StatusCallback)]; ok {
			r.atTwilio[o.reference+"|"+o.kind]++
		}
	}
	if err := e.activeRows(ctx, &r); err != nil {
		return r, err
	}
	money, err := e.pool.Query(ctx, `SELECT booking_reference, sum(amount_captured)::bigint, sum(n)::bigint,
		count(*) FILTER (WHERE status = 'requires_capture') FROM (
		SELECT p.booking_reference, p.amount_captured, p.status,
			(SELECT count(*) FROM refunds f WHERE f.tenant_id = p.tenant_id AND f.payment_intent_id = p.id) AS n
		FROM payment_intents p WHERE p.booking_reference IS NOT NULL) x GROUP BY booking_reference`)
	if err != nil {
		return r, fmt.Errorf("deposits: %w", err)
	}
	defer money.Close()
	for money.Next() {
		var ref string
		var captured, refunds, authorised int64
		if err := money.Scan(&ref, &captured, &refunds, &authorised); err != nil {
			return r, err
		}
		r.captured[ref], r.refunds[ref], r.authorised[ref] = captured, refunds, authorised
	}
	return r, money.Err()
}

// activeKey names a booking's reservations at one slot.
func activeKey(ref string, start time.Time) string {
	return reference.SagaOf(ref) + "|" + start.UTC().Format(time.RFC3339)
}

// activeRows reads the held and confirmed reservations into r.
func (e *env) activeRows(ctx context.Context, r *changeRows) error {
	rows, err := e.pool.Query(ctx, `SELECT reference, customer, service, lower(slot), status FROM calendar_reservations WHERE status IN ('held', 'confirmed')`)
	if err != nil {
		return fmt.Errorf("active reservations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ref, customer, service, status string
		var start time.Time
		if err := rows.Scan(&ref, &customer, &service, &start, &status); err != nil {
			return fmt.Errorf("active reservations: %w", err)
		}
		saga := reference.SagaOf(ref)
		r.active[activeKey(ref, start)]++
		r.activeOf[saga]++
		if status == "confirmed" {
			key := wishKey(customer, service, start)
			r.confirmedAt[key] = append(r.confirmedAt[key], saga)
		}
	}
	return rows.Err()
}

// reminderKind reports whether an outbox kind is a reminder's: the
// message check tells reminders apart by kind, as two offsets may say the
// same words.
func reminderKind(kind string) bool { return strings.HasPrefix(kind, lifecycle.MessageKindReminder) }

// kindsOf lists the outbox kinds of ref, for a finding's example.
func (r changeRows) kindsOf(ref string) string {
	var kinds []string
	for key, row := range r.byRef {
		if strings.HasPrefix(key, ref+"|") {
			kinds = append(kinds, row.kind+" "+row.state)
		}
	}
	slices.Sort(kinds)
	return strings.Join(kinds, ", ")
}
