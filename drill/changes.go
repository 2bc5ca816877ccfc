package drill

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// After a booking is confirmed, some customers cancel it and some move
// it, through the same at-least-once channels as the booking itself. The
// drill plans these changes with the scenarios (a separate random stream,
// so a seed's scenarios stay what they were), sends them once the booking
// is confirmed, and checks their effects from the rows (changecheck.go).

// ChangeKind is what a customer does with a confirmed booking.
type ChangeKind string

// The changes a customer makes.
const (
	// Cancel: "Ich muss leider absagen".
	Cancel ChangeKind = "cancel"
	// Reschedule: "Können wir auf Donnerstag 14 Uhr verschieben?".
	Reschedule ChangeKind = "reschedule"
	// Rebook: a cancel, then the same wish again once the cancellation
	// message arrived, or for some while the cancel is under way
	// (rebook.go): a new booking at the same slot.
	Rebook ChangeKind = "rebook"
	// MoveBack: a reschedule, then a booking request for the old slot once
	// the move is confirmed: a new booking there, the moved one stays.
	MoveBack ChangeKind = "move_back"
	// CancelEarly: a cancel sent while the booking saga is in Phase, not
	// after its confirmation (earlycancel.go).
	CancelEarly ChangeKind = "cancel_early"
)

// cancels reports whether k starts with a cancel of the booking.
func (k ChangeKind) cancels() bool { return k == Cancel || k == Rebook || k == CancelEarly }

// moves reports whether k starts with a reschedule.
func (k ChangeKind) moves() bool { return k == Reschedule || k == MoveBack }

// Duplication is how a change reaches bookonce more than once.
type Duplication string

// The duplications of a change.
const (
	// Once: one message or one request.
	Once Duplication = "once"
	// AcrossChannels: the same change by voice and WhatsApp at the same
	// moment (through the API: two requests under two keys at once).
	AcrossChannels Duplication = "cross_channel"
	// Redelivered: the same event again (Twilio redelivers the message;
	// through the API: the same Idempotency-Key again).
	Redelivered Duplication = "redelivered"
)

// Change is what a customer does once their booking is confirmed.
type Change struct {
	Kind ChangeKind `json:"kind"`
	// To is a reschedule's new start; drawn like the wishes' slots, so it
	// competes with no other booking.
	To  time.Time   `json:"to,omitzero"`
	Dup Duplication `json:"dup"`
	// Phase is when a CancelEarly is sent: the saga phase it aims at.
	Phase SagaPhase `json:"phase,omitempty"`
	// Phrasing picks the words (and, for Once, the channel).
	Phrasing int `json:"phrasing"`
}

// ChangeMode is how the drill's customers send their changes.
type ChangeMode string

// The ways to send changes.
const (
	// ChangesChat: as customers do, signed WhatsApp and voice webhooks
	// through the gateway ("Ich muss leider absagen").
	ChangesChat ChangeMode = "chat"
	// ChangesAPI: the gateway's API, POST /v1/appointments/{id}/cancel
	// and …/reschedule, with a bearer token and an Idempotency-Key.
	ChangesAPI ChangeMode = "api"
	// ChangesOff: no changes.
	ChangesOff ChangeMode = "off"
)

// DefaultChangeShare is the default share (percent of scenarios with one
// wish) of cancels and of reschedules each; DefaultRebookShare of rebooks
// (two of three after a cancel, one after a move) and
// DefaultEarlyCancelShare of cancels during the saga (spread over the
// phases).
const (
	DefaultChangeShare      = 10
	DefaultRebookShare      = 8
	DefaultEarlyCancelShare = 12
)

// ChangeShares are the percent of one-wish scenarios given each change.
type ChangeShares struct {
	Cancel, Reschedule, Rebook, EarlyCancel int
}

// planChanges gives the one-wish scenarios their changes in the shares
// of sh, with new slots from s that compete with nothing. A change after
// the booking only happens to a booking that was confirmed (a contention
// loser's is never sent). Scenarios with two wishes are left alone: "ich
// muss absagen" would not say which; so are contention rivals, whose slot
// others want. The draws for cancels and reschedules come first, so a
// seed plans them as it did before rebooks and early cancels came in.
func planChanges(all []Scenario, rng *rand.Rand, s *slots, sh ChangeShares) {
	busy := busySpans(all)
	for i := range all {
		if len(all[i].Wishes) != 1 {
			continue
		}
		r := rng.IntN(100)
		c := &Change{Dup: []Duplication{Once, Once, AcrossChannels, Redelivered}[rng.IntN(4)], Phrasing: rng.IntN(1 << 16)}
		moveTo := func() {
			c.To = s.moveTarget(busy)
			busy.add(c.To)
		}
		late := sh.Cancel + sh.Reschedule
		switch {
		case r < sh.Cancel:
			c.Kind = Cancel
		case r < late:
			c.Kind = Reschedule
			moveTo()
		case all[i].Kind == Contention:
			continue
		case r < late+sh.Rebook:
			c.Kind = Rebook
			if c.Phrasing%3 == 0 {
				c.Kind = MoveBack
				moveTo()
			}
		case r < late+sh.Rebook+sh.EarlyCancel:
			c.Kind = CancelEarly
			c.Phase = SagaPhases[c.Phrasing%len(SagaPhases)]
		default:
			continue
		}
		all[i].Change = c
	}
}

// spans are the starts of the bookings the scenarios ask for (every one
// lasting at most maxService), and the contended starts apart: a moved
// booking must not make three run at once, nor touch a contended slot.
type spans struct {
	starts    []time.Time
	contended []time.Time
}

// maxService is the longest service of the demo tenant (inspection).
const maxService = 90 * time.Minute

func busySpans(all []Scenario) *spans {
	b := &spans{}
	for _, sc := range all {
		for _, w := range sc.Wishes {
			if sc.Kind == Contention {
				b.contended = append(b.contended, w.Start)
			} else {
				b.starts = append(b.starts, w.Start)
			}
		}
	}
	return b
}

func (b *spans) add(t time.Time) { b.starts = append(b.starts, t) }

// fits reports whether a booking at t keeps at most two bookings running
// at once and stays clear of every contended slot.
func (b *spans) fits(t time.Time) bool {
	overlaps := func(x, y time.Time) bool { return x.Before(y.Add(maxService)) && y.Before(x.Add(maxService)) }
	for _, c := range b.contended {
		if overlaps(t, c) {
			return false
		}
	}
	// The most running at once is reached at t or at a start within it.
	points := []time.Time{t}
	for _, s := range b.starts {
		if s.Equal(t) {
			return false
		}
		if !s.Before(t) && s.Before(t.Add(maxService)) {
			points = append(points, s)
		}
	}
	for _, p := range points {
		running := 1 // the moved booking
		for _, s := range b.starts {
			if !p.Before(s) && p.Before(s.Add(maxService)) {
				running++
			}
		}
		if running > 2 {
			return false
		}
	}
	return true
}

// moveHours are the hours a booking may be moved to.
var moveHours = []int{8, 9, 10, 11, 12, 13, 14, 15, 16}

// moveTarget is the earliest free hour, from the first drill day on, that
// fits beside every booking: early targets let customers name the day by
// its weekday.
func (s *slots) moveTarget(b *spans) time.Time {
	for day := 0; ; day++ {
		for _, t := range s.free(day, moveHours) {
			if b.fits(t) {
				return s.take(t)
			}
		}
	}
}

// withinWeek reports whether a weekday alone names t unambiguously when
// said at now: t is on one of the next six days.
func withinWeek(t, now time.Time) bool {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, t.Location())
	return t.After(today.AddDate(0, 0, 1)) && t.Before(today.AddDate(0, 0, 7))
}

// cancelTexts are ways customers cancel; the chat path must understand
// each as a cancel of their confirmed booking.
var cancelTexts = []string{"Ich muss leider absagen", "Ich kann nicht kommen, bitte stornieren", "cancel my appointment"}

var weekdaysDE = []string{"Sonntag", "Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"}

// weekdayMoveTexts name the new slot by weekday (only for a slot within
// the coming week); dateMoveTexts by date.
var (
	weekdayMoveTexts = []func(t time.Time) string{
		func(t time.Time) string {
			return fmt.Sprintf("Können wir auf %s %d Uhr verschieben?", weekdaysDE[t.Weekday()], t.Hour())
		},
		func(t time.Time) string { return fmt.Sprintf("Can we move it to %s at %d:00?", t.Weekday(), t.Hour()) },
	}
	dateMoveTexts = []func(t time.Time) string{
		func(t time.Time) string { return fmt.Sprintf("Bitte verschieben auf %s %d Uhr", date(t), t.Hour()) },
		func(t time.Time) string {
			return fmt.Sprintf("Können wir den Termin auf den %s um %d Uhr verschieben?", date(t), t.Hour())
		},
	}
)

// changeText is what the customer says for c, at now.
func changeText(c Change, now time.Time) string {
	if c.Kind.cancels() {
		return cancelTexts[c.Phrasing%len(cancelTexts)]
	}
	if withinWeek(c.To, now.In(c.To.Location())) && c.Phrasing%3 != 0 {
		return weekdayMoveTexts[c.Phrasing%len(weekdayMoveTexts)](c.To)
	}
	return dateMoveTexts[c.Phrasing%len(dateMoveTexts)](c.To)
}
