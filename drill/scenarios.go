package drill

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Kind is what a customer does in a drill.
type Kind string

// The scenario kinds. Each one is a way real traffic duplicates, or
// must not be deduplicated.
const (
	// WhatsApp: one message, redelivered by Twilio 0 to 3 times, sometimes
	// concurrently (the same MessageSid).
	WhatsApp Kind = "whatsapp"
	// Voice: a call whose speech result is redelivered.
	Voice Kind = "voice"
	// CrossChannel: the same wish by voice and WhatsApp at the same moment.
	CrossChannel Kind = "cross-channel"
	// Rephrase: the same wish again in other words, or the same words
	// tapped twice (new MessageSid each): one booking.
	Rephrase Kind = "rephrase"
	// Second: a genuine second booking (another service on another day):
	// two bookings; merging them would be a false dedup.
	Second Kind = "second-booking"
	// Ambiguous: the same service twice on one day at different times:
	// it goes to review, and the drill, as the operator, decides
	// "separate", so two bookings.
	Ambiguous Kind = "ambiguous-second"
	// Contention: rivalSize different customers ask for the same slot
	// (same service, same start) at the same moment, more than the
	// resources that can do it: the winners book, every loser is rejected
	// and offered free slots, and no resource is booked twice.
	Contention Kind = "contention"
	// Agent: an AI agent books for the customer through the agent tools
	// (book_appointment over HTTP), retrying as agents do: the same call
	// again under its key, a re-planned call under a new key, two calls in
	// parallel, the slot in other words. One booking.
	Agent Kind = "agent"
)

// Kinds lists the kinds in a stable order.
var Kinds = []Kind{WhatsApp, Voice, CrossChannel, Rephrase, Second, Ambiguous, Contention, Agent}

// mix is the share of each kind, in percent of scenarios, in Kinds order
// (a contention scenario stands for rivalSize customers). The agent's
// share is taken from WhatsApp's, so the other figures stay comparable.
var mix = []int{22, 20, 15, 12, 12, 6, 5, 8}

// rivalSize is how many customers compete for one contended slot: more
// than the demo tenant's resources (two bays and a technician), so at
// least one always loses.
const rivalSize = 4

// Wish is one booking a customer asks for.
type Wish struct {
	Service string    `json:"service"`
	Start   time.Time `json:"start"`
}

// Scenario is one customer's part of the drill.
type Scenario struct {
	ID       int    `json:"id"`
	Kind     Kind   `json:"kind"`
	Customer string `json:"customer"`
	Wishes   []Wish `json:"wishes"`
	// Redeliveries is how often Twilio sends the same webhook again;
	// Concurrent sends them at the same moment as the first.
	Redeliveries int  `json:"redeliveries"`
	Concurrent   bool `json:"concurrent"`
	// Phrasing picks the wording of each message.
	Phrasing int `json:"phrasing"`
	// Group joins the rivals of one contended slot (0: none); the driver
	// sends their messages at the same moment.
	Group int `json:"group,omitempty"`
	// Change is what the customer does once the booking is confirmed
	// (nil: nothing); see changes.go.
	Change *Change `json:"change,omitempty"`
	// StaleWindow: the customer wrote more than a day before the
	// booking's messages (window.go); Stop: they write STOPP right after
	// their wish (optout.go).
	StaleWindow bool `json:"stale_window,omitempty"`
	Stop        bool `json:"stop,omitempty"`
	// Tenant is the shop the customer writes to and calls: "" the demo
	// shop, or the second shop (shops.go).
	Tenant string `json:"tenant,omitempty"`
}

var services = []string{"tire-change", "inspection", "oil-change"}

// scenarios draws scenarios until they ask for n bookings.
func scenarios(n int, rng *rand.Rand, loc *time.Location, from time.Time, run int) []Scenario {
	all, _ := generate(n, rng, loc, from, run)
	return all
}

// generate draws the scenarios and returns the slots they took, from
// which the changes' new slots are drawn.
func generate(n int, rng *rand.Rand, loc *time.Location, from time.Time, run int) ([]Scenario, *slots) {
	slots := newSlots(loc, from)
	var out []Scenario
	for booked := 0; booked < n; {
		k := pickKind(rng)
		if (k == Second || k == Ambiguous) && n-booked < 2 || k == Contention && n-booked < rivalSize {
			k = WhatsApp
		}
		if k == Contention {
			rivals := contention(len(out), rng, slots, run)
			out = append(out, rivals...)
			booked += len(rivals)
			continue
		}
		s := Scenario{ID: len(out), Kind: k, Customer: fmt.Sprintf("+49151%02d%06d", run%100, len(out)),
			Redeliveries: rng.IntN(4), Concurrent: rng.IntN(2) == 0, Phrasing: rng.IntN(1 << 16)}
		svc := services[rng.IntN(len(services))]
		switch k {
		case Second:
			first := slots.even()
			other := services[(indexOf(services, svc)+1+rng.IntN(len(services)-1))%len(services)]
			s.Wishes = []Wish{{svc, first}, {other, slots.oddOtherDay(first)}}
		case Ambiguous:
			a, b := slots.evenPair()
			s.Wishes = []Wish{{svc, a}, {svc, b}}
		default:
			s.Wishes = []Wish{{svc, slots.even()}}
		}
		booked += len(s.Wishes)
		out = append(out, s)
	}
	return out, slots
}

func pickKind(rng *rand.Rand) Kind {
	r := rng.IntN(100)
	for i, share := range mix {
		if r < share {
			return Kinds[i]
		}
		r -= share
	}
	return WhatsApp
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return 0
}

// slots hands out appointment times so that bookings of different
// customers never compete for a bay: rejections would hide what the
// drill measures. Main wishes start on even hours (8 to 16), second wishes
// on odd hours (9 to 15) of another day; with services of at most 90
// minutes no two even (or two odd) bookings overlap, so at most two run at
// once, and the demo tenant has two bays.
type slots struct {
	loc   *time.Location
	first time.Time // the first day (midnight, local)
	taken map[time.Time]bool
	day   int // current day index of the even sequence
}

func newSlots(loc *time.Location, from time.Time) *slots {
	d := from.In(loc).AddDate(0, 0, 2)
	return &slots{loc: loc, first: time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc), taken: map[time.Time]bool{}}
}

func (s *slots) at(day, hour int) time.Time {
	d := s.first.AddDate(0, 0, day)
	return time.Date(d.Year(), d.Month(), d.Day(), hour, 0, 0, 0, s.loc)
}

func (s *slots) open(day int) bool { return s.at(day, 12).Weekday() != time.Sunday }

// free returns the free hours of a day among hours.
func (s *slots) free(day int, hours []int) []time.Time {
	if !s.open(day) {
		return nil
	}
	var out []time.Time
	for _, h := range hours {
		if t := s.at(day, h); !s.taken[t] {
			out = append(out, t)
		}
	}
	return out
}

var evenHours, oddHours = []int{8, 10, 12, 14, 16}, []int{9, 11, 13, 15}

func (s *slots) take(t time.Time) time.Time { s.taken[t] = true; return t }

// even is the next free even-hour slot.
func (s *slots) even() time.Time {
	for ; ; s.day++ {
		if f := s.free(s.day, evenHours); len(f) > 0 {
			return s.take(f[0])
		}
	}
}

// evenPair is two free even-hour slots on one day.
func (s *slots) evenPair() (time.Time, time.Time) {
	for ; ; s.day++ {
		if f := s.free(s.day, evenHours); len(f) >= 2 {
			return s.take(f[0]), s.take(f[len(f)-1])
		}
	}
}

// contended is a free even-hour slot that nothing else overlaps: its odd
// neighbours are taken too, so the rivals compete only with each other and
// a second booking is never rejected for their sake.
func (s *slots) contended() time.Time {
	for day := s.day; ; day++ {
		for _, t := range s.free(day, evenHours) {
			before, after := t.Add(-time.Hour), t.Add(time.Hour)
			if !s.taken[before] && !s.taken[after] {
				s.take(before)
				s.take(after)
				return s.take(t)
			}
		}
	}
}

// oddOtherDay is a free odd-hour slot on a day after t's.
func (s *slots) oddOtherDay(t time.Time) time.Time {
	for day := int(t.Sub(s.first).Hours()/24) + 1; ; day++ {
		if f := s.free(day, oddHours); len(f) > 0 {
			return s.take(f[0])
		}
	}
}
