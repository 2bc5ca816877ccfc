package drill

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
)

// changeFixture is a drill's end in rows: booking A cancelled in time
// (refunded), B cancelled late (deposit kept), C moved, D kept; every
// booking reminded once per offset, each cancelled one told once.
type changeFixture struct {
	t    *testing.T
	e    *env
	t0   time.Time
	msgs []twilio.FakeMessage
	sent []*appliedChange
	conf []wishState
}

var fixturePolicy = changePolicy{window: 72 * time.Hour, reminders: []time.Duration{2 * 365 * 24 * time.Hour, 365 * 24 * time.Hour}}

func (f *changeFixture) exec(sql string, args ...any) {
	f.t.Helper()
	_, err := f.e.pool.Exec(context.Background(), sql, args...)
	require.NoError(f.t, err)
}

// reservation inserts a 90-minute inspection reservation.
func (f *changeFixture) reservation(id, resource, customer, ref string, start time.Time, status string) {
	f.exec(`INSERT INTO calendar_reservations (id, tenant_id, resource_id, service, customer, reference, slot, status, hold_expires_at, booking_id)
		VALUES ($1, 'demo', $2, 'inspection', $3, $4, tstzrange($5::timestamptz, $5::timestamptz + interval '90 minutes'), $6, $5, $1)`,
		id, resource, customer, ref, start, status)
}

// message inserts an outbox row created at created and, unless it is
// "pending", its message at Twilio.
func (f *changeFixture) message(id, ref, kind, to string, created time.Time, state string) {
	f.exec(`INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, state, idempotency_key, created_at)
		VALUES ($1, 'demo', $2, $3, 'whatsapp', $4, $3, $5, $1, $6)`, id, ref, kind, to, state, created)
	if state != "pending" && state != "review" {
		f.msgs = append(f.msgs, twilio.FakeMessage{To: to, Body: kind, StatusCallback: "http://gw/status?outbox_id=" + id})
	}
}

// deposit inserts a captured deposit of ref, refunded n times in full.
func (f *changeFixture) deposit(pi, ref string, refunds int) {
	f.exec(`INSERT INTO payment_intents (id, tenant_id, amount, currency, status, capture_method, amount_captured, amount_refunded, charge_id, metadata, created_at)
		VALUES ($1, 'demo', 2000, 'eur', 'succeeded', 'manual', 2000, $2, 'ch_' || $1, jsonb_build_object('booking_reference', $3::text, 'step', 'deposit'), $4)`,
		pi, min(refunds, 1)*2000, ref, f.t0)
	for i := range refunds {
		f.refund(pi, i)
	}
}

func (f *changeFixture) refund(pi string, i int) {
	f.exec(`INSERT INTO refunds (id, tenant_id, payment_intent_id, charge_id, amount, currency, status, created_at)
		VALUES ($1, 'demo', $2, 'ch_' || $2, 2000, 'eur', 'succeeded', $3)`, fmt.Sprintf("re_%s_%d", pi, i), pi, f.t0)
}

// booking is a confirmed booking of customer at start: its reservation,
// confirmation, reminders, deposit, and the wish the drill saw confirmed.
func (f *changeFixture) booking(id int, ref, customer string, start time.Time, status string, refunds int) Scenario {
	f.reservation("bk_"+ref, []string{"bay-1", "bay-2"}[id%2], customer, ref, start, status)
	f.message("conf-"+ref, ref, "confirmation", customer, f.t0.Add(-2*time.Minute), "sent")
	for _, off := range fixturePolicy.reminders {
		f.message("rem-"+off.String()+"-"+ref, ref, "reminder_"+off.String(), customer, f.t0.Add(-time.Minute), "sent")
	}
	f.deposit("pi_"+ref, ref, refunds)
	s := Scenario{ID: id, Kind: WhatsApp, Customer: customer, Wishes: []Wish{{"inspection", start}}}
	f.conf = append(f.conf, wishState{scenario: s, workflowID: ref, outcome: Confirmed})
	return s
}

// change records a change the drill sent at t0, and (cancel) its
// cancellation a minute later.
func (f *changeFixture) change(s Scenario, ref string, c Change) {
	f.sent = append(f.sent, &appliedChange{scenario: s, wish: s.Wishes[0], change: c, workflowID: ref, sentAt: f.t0, answer: "200"})
	if c.Kind.cancels() {
		f.message("cancel-"+ref, ref, "cancellation", s.Customer, f.t0.Add(time.Minute), "sent")
	}
}

func newChangeFixture(t *testing.T) *changeFixture {
	fake := twilio.NewFakeServer()
	t.Cleanup(fake.Close)
	f := &changeFixture{t: t, e: &env{pool: testsupport.Database(t), twilio: fake}, t0: time.Now().UTC().Truncate(time.Hour)}
	day := func(n int) time.Time { return f.t0.Add(time.Duration(n) * 24 * time.Hour) }
	a := f.booking(1, "wf-a", "+49151A", day(10), "cancelled", 1)
	f.change(a, "wf-a", Change{Kind: Cancel})
	b := f.booking(2, "wf-b", "+49151B", day(2), "cancelled", 0) // 48 h before: inside the 72 h window
	f.change(b, "wf-b", Change{Kind: Cancel, Dup: AcrossChannels})
	c := f.booking(3, "wf-c", "+49151C", day(5), "cancelled", 0)
	f.reservation("bk_wf-c-moved", "bay-2", "+49151C", "wf-c#move-1", day(6), "confirmed")
	f.change(c, "wf-c", Change{Kind: Reschedule, To: day(6), Dup: Redelivered})
	f.booking(4, "wf-d", "+49151D", day(7), "confirmed", 0)
	// A rebook: cancelled in time (refunded), then booked again at the
	// same slot under the new attempt's workflow ID, and told.
	e := f.booking(5, "wf-e", "+49151E", day(9), "cancelled", 1)
	f.change(e, "wf-e", Change{Kind: Rebook})
	f.sent[len(f.sent)-1].again = rebookAttempt{sentAt: f.t0.Add(2 * time.Minute), channel: "whatsapp", answer: "confirmed"}
	f.reservation("bk_wf-e-2", "bay-1", "+49151E", "wf-e-2", day(9), "confirmed")
	f.message("conf-wf-e-2", "wf-e-2", "confirmation", "+49151E", f.t0.Add(3*time.Minute), "sent")
	// An early cancel the saga carried out: the hold released, nothing
	// told but the acknowledgement, nothing charged.
	f.reservation("bk_wf-f", "bay-2", "+49151F", "wf-f", day(8), "released")
	sf := Scenario{ID: 6, Kind: WhatsApp, Customer: "+49151F", Wishes: []Wish{{"inspection", day(8)}}}
	f.msgs = append(f.msgs, twilio.FakeMessage{To: "+49151F", Body: "Verstanden: Wir stornieren Ihre noch nicht bestätigte Buchung", DateCreated: f.t0})
	f.sent = append(f.sent, &appliedChange{scenario: sf, wish: sf.Wishes[0], change: Change{Kind: CancelEarly, Phase: PhaseWaitingLink},
		workflowID: "wf-f", sentAt: f.t0, answer: "cancelling_in_saga", phaseSeen: PhaseWaitingLink})
	return f
}

func (f *changeFixture) check() ChangeChecks {
	f.t.Helper()
	c, err := f.e.checkChanges(context.Background(), f.sent, f.conf, f.msgs, fixturePolicy)
	require.NoError(f.t, err)
	return c
}

// TestChangeChecksPassOnAGoodEnd: the fixture, as the lifecycle should
// leave it, has no finding, and its tallies are right.
func TestChangeChecksPassOnAGoodEnd(t *testing.T) {
	c := newChangeFixture(t).check()
	require.Empty(t, c.failures(), "%+v", c)
	require.Equal(t, 3, c.Cancelled)
	require.Equal(t, 1, c.Rebooks.Rebooked)
	require.Equal(t, 1, c.Early.InSaga)
	require.Equal(t, 1, c.Moved)
	require.Equal(t, 2, c.Refunded)
	require.Equal(t, 1, c.Kept)
	require.Equal(t, 3, c.CancellationMessages)
	require.Equal(t, map[string]int{"17520h0m0s": 5, "8760h0m0s": 5}, c.RemindersByOffset)
}

// TestChangeChecksFail: each check finds the one defect made for it.
func TestChangeChecksFail(t *testing.T) {
	cases := []struct {
		name   string
		defect func(f *changeFixture)
		found  func(c ChangeChecks) int
	}{
		{"a deposit refunded twice", func(f *changeFixture) { f.refund("pi_wf-a", 1) },
			func(c ChangeChecks) int { return c.DoubleRefunds }},
		{"a late cancel refunded", func(f *changeFixture) { f.refund("pi_wf-b", 0) },
			func(c ChangeChecks) int { return c.RefundsOnKept }},
		{"a moved booking refunded", func(f *changeFixture) { f.refund("pi_wf-c", 0) },
			func(c ChangeChecks) int { return c.RefundsOnKept }},
		{"a free cancel not refunded", func(f *changeFixture) { f.exec(`DELETE FROM refunds WHERE payment_intent_id = 'pi_wf-a'`) },
			func(c ChangeChecks) int { return c.MissingRefunds }},
		{"a cancelled booking still confirmed", func(f *changeFixture) {
			f.exec(`UPDATE calendar_reservations SET status = 'confirmed' WHERE id = 'bk_wf-a'`)
		}, func(c ChangeChecks) int { return c.OrphanedHolds }},
		{"a moved booking holding both slots", func(f *changeFixture) {
			f.exec(`UPDATE calendar_reservations SET status = 'held' WHERE id = 'bk_wf-c'`)
		}, func(c ChangeChecks) int { return c.OrphanedHolds }},
		{"a reminder after the cancellation", func(f *changeFixture) {
			f.exec(`UPDATE outbox_messages SET created_at = $1 WHERE id = 'rem-8760h0m0s-wf-a'`, f.t0.Add(2*time.Minute))
		}, func(c ChangeChecks) int { return c.RemindersAfterCancel }},
		{"a reminder sent twice", func(f *changeFixture) {
			f.msgs = append(f.msgs, twilio.FakeMessage{To: "+49151D", StatusCallback: "http://gw/status?outbox_id=rem-8760h0m0s-wf-d"})
		}, func(c ChangeChecks) int { return c.RemindersExtra }},
		{"a reminder due but not sent", func(f *changeFixture) {
			f.exec(`UPDATE outbox_messages SET state = 'pending' WHERE id = 'rem-8760h0m0s-wf-d'`)
			f.msgs = dropCallback(f.msgs, "rem-8760h0m0s-wf-d")
		}, func(c ChangeChecks) int { return c.RemindersMissing }},
		{"a cancellation told twice", func(f *changeFixture) {
			f.msgs = append(f.msgs, twilio.FakeMessage{To: "+49151A", StatusCallback: "http://gw/status?outbox_id=cancel-wf-a"})
		}, func(c ChangeChecks) int { return c.CancellationsNotOne }},
		{"a cancellation nobody asked for", func(f *changeFixture) {
			f.message("cancel-wf-d", "wf-d", "cancellation", "+49151D", f.t0, "sent")
		}, func(c ChangeChecks) int { return c.UnexpectedCancels }},
		{"a cancel that changed nothing", func(f *changeFixture) {
			f.change(f.conf[3].scenario, "wf-d", Change{Kind: Cancel})
			f.exec(`DELETE FROM outbox_messages WHERE id = 'cancel-wf-d'`)
			f.msgs = dropCallback(f.msgs, "cancel-wf-d")
		}, func(c ChangeChecks) int { return c.WithoutEffect }},
		{"a rebook answered in progress", func(f *changeFixture) {
			f.sent[3].again.answer = "false: bereits in Bearbeitung"
		}, func(c ChangeChecks) int { return c.Rebooks.FalseAnswers }},
		{"a rebook that booked nothing", func(f *changeFixture) {
			f.exec(`UPDATE calendar_reservations SET status = 'released' WHERE id = 'bk_wf-e-2'`)
		}, func(c ChangeChecks) int { return c.Rebooks.Lost }},
		{"an early cancel acknowledged and the booking kept", func(f *changeFixture) {
			f.exec(`UPDATE calendar_reservations SET status = 'confirmed' WHERE id = 'bk_wf-f'`)
		}, func(c ChangeChecks) int { return c.Early.NotCarriedOut }},
		{"an early cancel whose deposit stayed captured", func(f *changeFixture) {
			f.deposit("pi_wf-f", "wf-f", 0)
		}, func(c ChangeChecks) int { return c.Early.DepositsHeld }},
		{"an early cancel nobody answered", func(f *changeFixture) {
			f.msgs = dropTo(f.msgs, "+49151F")
		}, func(c ChangeChecks) int { return c.Early.Unanswered }},
		{"a move that changed nothing", func(f *changeFixture) {
			f.exec(`UPDATE calendar_reservations SET status = 'confirmed' WHERE id = 'bk_wf-c'`)
			f.exec(`DELETE FROM calendar_reservations WHERE id = 'bk_wf-c-moved'`)
		}, func(c ChangeChecks) int { return c.WithoutEffect }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newChangeFixture(t)
			tc.defect(f)
			c := f.check()
			require.Equal(t, 1, tc.found(c), "%+v", c)
			require.NotEmpty(t, c.failures(), "the finding fails the drill")
		})
	}
}

func dropTo(msgs []twilio.FakeMessage, to string) []twilio.FakeMessage {
	var out []twilio.FakeMessage
	for _, m := range msgs {
		if m.To != to {
			out = append(out, m)
		}
	}
	return out
}

func dropCallback(msgs []twilio.FakeMessage, id string) []twilio.FakeMessage {
	var out []twilio.FakeMessage
	for _, m := range msgs {
		if callbackOutboxID(m.StatusCallback) != id {
			out = append(out, m)
		}
	}
	return out
}
