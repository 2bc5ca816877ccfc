package drill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/bookonce/bookonce/internal/radicale"
	"github.com/bookonce/bookonce/shopcal"
)

// staffUIDPrefix starts the UIDs of what the drill's staff enter.
const staffUIDPrefix = "frontdesk"

// staffEvent is an appointment the front desk entered in a resource's own
// calendar during the drill, and when: entered once the provider stored
// it, deleted once staff deleted it (zero: still there).
type staffEvent struct {
	key              calKey
	uid              string
	start, end       time.Time
	entered, deleted time.Time
}

// staff plays the shops' front desks: while the customers book, they
// enter appointments in the bays' own calendars, directly at the
// providers as a calendar app does (not through bookonce, not through the
// workers' fault proxies), and delete some again. An appointment covers a
// customer's wished slot on the bay a hold takes first, so a customer who
// writes after it must be booked elsewhere (or the hold refused), and one
// who booked before it meets a conflict for a person. Only wishes no other
// wish or move comes near are taken: another bay is free for them.
type staff struct {
	cals *shopCals
	rng  *rand.Rand
	// wishes are the slots staff may take, in random order.
	wishes []staffWish
	mu     sync.Mutex
	events []*staffEvent
	errs   []string
}

type staffWish struct {
	key        calKey
	start, end time.Time
}

// newStaff picks the wishes staff may take: of a customer who is not a
// contention rival, alone within the longest service of any other wish
// or move target, on a shop whose first bay has a calendar.
func newStaff(cals *shopCals, all []Scenario, duration func(tenant, service string) time.Duration, seed uint64) *staff {
	s := &staff{cals: cals, rng: rand.New(rand.NewPCG(seed, 6))}
	var starts []time.Time
	for _, sc := range all {
		for _, w := range sc.Wishes {
			starts = append(starts, w.Start)
		}
		if sc.Change != nil && sc.Change.Kind.moves() {
			starts = append(starts, sc.Change.To)
		}
	}
	alone := func(t time.Time) bool {
		n := 0
		for _, o := range starts {
			if o.Before(t.Add(maxService)) && t.Before(o.Add(maxService)) {
				n++
			}
		}
		return n == 1
	}
	for _, sc := range all {
		k := calKey{sc.tenant(), "bay-1"}
		if sc.Kind == Contention || cals.ids[k] == "" {
			continue
		}
		for _, w := range sc.Wishes {
			if alone(w.Start) {
				s.wishes = append(s.wishes, staffWish{key: k, start: w.Start, end: w.Start.Add(duration(k.tenant, w.Service))})
			}
		}
	}
	s.rng.Shuffle(len(s.wishes), func(i, j int) { s.wishes[i], s.wishes[j] = s.wishes[j], s.wishes[i] })
	return s
}

// run enters an appointment every so often (and deletes one now and
// then) until ctx ends.
func (s *staff) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s.rng.IntN(4) == 0 {
			s.deleteOne(ctx)
			continue
		}
		if len(s.wishes) == 0 {
			continue
		}
		w := s.wishes[0]
		s.wishes = s.wishes[1:]
		s.enter(ctx, w)
	}
}

func (s *staff) enter(ctx context.Context, w staffWish) {
	ev := &staffEvent{key: w.key, start: w.start, end: w.end}
	s.mu.Lock()
	ev.uid = fmt.Sprintf("%s%d", staffUIDPrefix, len(s.events)+1)
	s.mu.Unlock()
	id := s.cals.ids[w.key]
	var err error
	switch calendarPlan[w.key] {
	case providerCalDAV:
		const layout = "20060102T150405Z"
		err = radicale.PutEvent(ctx, id, ev.uid, "BEGIN:VEVENT\nUID:"+ev.uid+"\nDTSTAMP:20260101T000000Z\nDTSTART:"+w.start.UTC().Format(layout)+
			"\nDTEND:"+w.end.UTC().Format(layout)+"\nSUMMARY:Stammkunde (Telefon)\nEND:VEVENT")
	case providerGoogle:
		s.cals.google.Put(id, gcal.Event{Id: ev.uid, Summary: "Stammkunde (Telefon)",
			Start: &gcal.EventDateTime{DateTime: w.start.UTC().Format(time.RFC3339)}, End: &gcal.EventDateTime{DateTime: w.end.UTC().Format(time.RFC3339)}})
	case providerMicrosoft:
		const layout = "2006-01-02T15:04:05"
		s.cals.graph.Put(drillMailbox, id, shopcal.GraphEvent{ID: ev.uid, Subject: "Stammkunde (Telefon)", ShowAs: "busy",
			Start: shopcal.GraphTime{DateTime: w.start.UTC().Format(layout), TimeZone: "UTC"}, End: shopcal.GraphTime{DateTime: w.end.UTC().Format(layout), TimeZone: "UTC"}})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil { // not the end of the drill cutting a write short
			s.errs = append(s.errs, err.Error())
		}
		return
	}
	ev.entered = time.Now()
	s.events = append(s.events, ev)
}

// deleteOne deletes a live appointment staff entered, at random.
func (s *staff) deleteOne(ctx context.Context) {
	s.mu.Lock()
	var live []*staffEvent
	for _, ev := range s.events {
		if ev.deleted.IsZero() {
			live = append(live, ev)
		}
	}
	s.mu.Unlock()
	if len(live) == 0 {
		return
	}
	ev := live[s.rng.IntN(len(live))]
	id := s.cals.ids[ev.key]
	// From the moment staff delete it, a booking there is no fault.
	deleting := time.Now()
	var err error
	switch calendarPlan[ev.key] {
	case providerCalDAV:
		err = radicale.DeleteEvent(ctx, id, ev.uid)
	case providerGoogle:
		s.cals.google.Remove(id, ev.uid)
	case providerMicrosoft:
		s.cals.graph.Remove(drillMailbox, id, ev.uid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.errs = append(s.errs, err.Error())
		}
		return
	}
	ev.deleted = deleting
}

// snapshot is what staff entered.
func (s *staff) snapshot() ([]staffEvent, []string) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]staffEvent, 0, len(s.events))
	for _, ev := range s.events {
		out = append(out, *ev)
	}
	return out, append([]string(nil), s.errs...)
}

// staffMargin absorbs the clocks' difference between the drill, which
// notes when the provider stored an event, and PostgreSQL, which notes
// when a hold was made.
const staffMargin = time.Second

// booked is a reservation that became a booking, as overBusy judges it.
type booked struct {
	key        calKey
	id         string
	start, end time.Time
	created    time.Time
}

// overBusy counts the bookings that lie over a staff appointment entered
// before their hold was made and not deleted by then: the hold step's
// re-read should have refused them.
func overBusy(bookings []booked, events []staffEvent) (n int, examples []string) {
	for _, b := range bookings {
		for _, ev := range events {
			if ev.key != b.key || !ev.start.Before(b.end) || !b.start.Before(ev.end) {
				continue
			}
			if ev.entered.Add(staffMargin).Before(b.created) && (ev.deleted.IsZero() || ev.deleted.After(b.created)) {
				n++
				if len(examples) < 5 {
					examples = append(examples, fmt.Sprintf("booking %s on %s/%s at %s, held %s after %s was entered",
						b.id, b.key.tenant, b.key.resource, b.start.UTC().Format(time.RFC3339), b.created.Sub(ev.entered).Round(time.Millisecond), ev.uid))
				}
			}
		}
	}
	return n, examples
}
