package drill

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/emersion/go-webdav"

	"github.com/bookonce/bookonce/shopcal"
)

// ShopCalendars is what the drill found in the shops' own calendars once
// every booking had settled: each confirmed booking on a resource with a
// calendar must be there exactly once, as one event under the ID its
// booking derives (shopcal.EventID), and nothing else of bookonce's.
type ShopCalendars struct {
	// Events are bookonce's events at the end, by provider.
	Events map[string]int `json:"events"`
	// Duplicates are copies of a booking's event beyond the first, in
	// one calendar or across a shop's calendars.
	Duplicates int `json:"duplicates"`
	// Missing are confirmed bookings whose event is not in their
	// resource's calendar.
	Missing int `json:"missing"`
	// Stray are events of bookonce's that no confirmed booking of that
	// resource owns (a cancelled or moved booking's event left behind).
	Stray int `json:"stray"`
	// StaffEntered and StaffDeleted are the appointments the drill's
	// staff entered in the calendars and deleted again; OverBusy the
	// bookings that lie over one entered before their hold (and not
	// deleted by then): the hold step's re-read should have refused them.
	StaffEntered int      `json:"staff_entered"`
	StaffDeleted int      `json:"staff_deleted"`
	OverBusy     int      `json:"over_busy"`
	StaffErrors  []string `json:"staff_errors,omitempty"`
	Examples     []string `json:"examples,omitempty"`
	// WaitedSeconds is how long the drill gave the lifecycles to carry
	// their last changes over.
	WaitedSeconds float64 `json:"waited_seconds"`
}

// Total is the number of wrong events and bookings.
func (s ShopCalendars) Total() int { return s.Duplicates + s.Missing + s.Stray + s.OverBusy }

func (s ShopCalendars) failures() []string {
	var out []string
	if s.Total() > 0 {
		out = append(out, fmt.Sprintf("shops' own calendars: %d duplicate, %d missing, %d stray events, %d bookings over staff's appointments (%s)",
			s.Duplicates, s.Missing, s.Stray, s.OverBusy, strings.Join(s.Examples, "; ")))
	}
	if len(s.StaffErrors) > 0 {
		out = append(out, fmt.Sprintf("the drill's staff could not write to their calendars: %v", s.StaffErrors))
	}
	return out
}

// shopCalendars compares the calendars with the confirmed bookings,
// polling up to wait: a lifecycle carries its last change over after its
// booking settled.
func (e *env) shopCalendars(ctx context.Context, wait time.Duration) (ShopCalendars, error) {
	started := time.Now()
	for {
		s, err := e.compareShopCalendars(ctx)
		if err != nil || s.Total() == 0 || time.Since(started) >= wait || ctx.Err() != nil {
			s.WaitedSeconds = time.Since(started).Round(time.Second).Seconds()
			if err == nil {
				err = e.judgeStaff(ctx, &s)
			}
			return s, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

func (e *env) compareShopCalendars(ctx context.Context) (ShopCalendars, error) {
	if e.cals == nil {
		return ShopCalendars{}, nil
	}
	// A moved booking's reservation is under "<reference>#move-n"; its
	// event under the lifecycle's reference.
	rows, err := e.pool.Query(ctx, `SELECT tenant_id, resource_id, split_part(reference, '#', 1) FROM calendar_reservations WHERE status = 'confirmed'`)
	if err != nil {
		return ShopCalendars{}, err
	}
	expected := map[string][]calKey{}
	for rows.Next() {
		var k calKey
		var ref string
		if err := rows.Scan(&k.tenant, &k.resource, &ref); err != nil {
			return ShopCalendars{}, err
		}
		if _, ok := e.cals.ids[k]; ok {
			id := shopcal.EventID(k.tenant, ref)
			expected[id] = append(expected[id], k)
		}
	}
	if err := rows.Err(); err != nil {
		return ShopCalendars{}, err
	}
	actual, err := e.cals.events(ctx)
	if err != nil {
		return ShopCalendars{}, err
	}
	s := calendarDiff(expected, actual)
	s.Events = map[string]int{}
	for k, ids := range actual {
		s.Events[calendarPlan[k]] += len(ids)
	}
	return s, nil
}

// calendarDiff judges the calendars' events (bookonce's event IDs by
// calendar, an ID once per copy) against the calendars each confirmed
// booking's event may be in.
func calendarDiff(expected map[string][]calKey, actual map[calKey][]string) ShopCalendars {
	var s ShopCalendars
	copies := map[string]int{}
	keys := make([]calKey, 0, len(actual))
	for k := range actual {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].tenant+keys[i].resource < keys[j].tenant+keys[j].resource })
	example := func(format string, a ...any) {
		if len(s.Examples) < 5 {
			s.Examples = append(s.Examples, fmt.Sprintf(format, a...))
		}
	}
	for _, k := range keys {
		for _, id := range actual[k] {
			if copies[id]++; copies[id] == 2 {
				example("%s copied in %s/%s", id, k.tenant, k.resource)
			}
			if !slices.Contains(expected[id], k) {
				s.Stray++
				example("%s in %s/%s owned by no booking there", id, k.tenant, k.resource)
			}
		}
	}
	for _, n := range copies {
		s.Duplicates += max(0, n-1)
	}
	for id, ks := range expected {
		found := false
		for _, k := range ks {
			found = found || slices.Contains(actual[k], id)
		}
		if !found {
			s.Missing++
			example("%s missing from %s/%s", id, ks[0].tenant, ks[0].resource)
		}
	}
	return s
}

// events lists bookonce's event IDs in every calendar of the drill, one
// entry per copy, as staff would see them (deleted ones not).
func (c *shopCals) events(ctx context.Context) (map[calKey][]string, error) {
	out := map[calKey][]string{}
	for k, id := range c.ids {
		out[k] = []string{}
		switch calendarPlan[k] {
		case providerCalDAV:
			dav, err := webdav.NewClient(nil, c.radicale)
			if err != nil {
				return nil, err
			}
			// The collection's absolute path, with its slash (a relative
			// name would lose it).
			files, err := dav.ReadDir(ctx, strings.TrimPrefix(id, c.radicale), false)
			if err != nil {
				return nil, fmt.Errorf("list the CalDAV calendar of %s/%s: %w", k.tenant, k.resource, err)
			}
			for _, f := range files {
				if name := path.Base(f.Path); !f.IsDir && strings.HasPrefix(name, "bookonce") {
					out[k] = append(out[k], strings.TrimSuffix(name, ".ics"))
				}
			}
		case providerGoogle:
			for _, ev := range c.google.Events(id) {
				if ev.Status != "cancelled" && strings.HasPrefix(ev.Id, "bookonce") {
					out[k] = append(out[k], ev.Id)
				}
			}
		case providerMicrosoft:
			for _, ev := range c.graph.Events(drillMailbox, id) {
				for _, p := range ev.Properties {
					if strings.HasPrefix(p.Value, "bookonce") {
						out[k] = append(out[k], p.Value)
					}
				}
			}
		}
	}
	return out, nil
}

// judgeStaff counts what the drill's staff entered and the bookings that
// lie over it (overBusy).
func (e *env) judgeStaff(ctx context.Context, s *ShopCalendars) error {
	events, errs := e.staff.snapshot()
	s.StaffErrors = errs
	for _, ev := range events {
		s.StaffEntered++
		if !ev.deleted.IsZero() {
			s.StaffDeleted++
		}
	}
	rows, err := e.pool.Query(ctx, `SELECT tenant_id, resource_id, booking_id, lower(slot), upper(slot), created_at
		FROM calendar_reservations WHERE booking_id IS NOT NULL`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var bookings []booked
	for rows.Next() {
		var b booked
		if err := rows.Scan(&b.key.tenant, &b.key.resource, &b.id, &b.start, &b.end, &b.created); err != nil {
			return err
		}
		bookings = append(bookings, b)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var ex []string
	s.OverBusy, ex = overBusy(bookings, events)
	s.Examples = append(s.Examples, ex...)
	return nil
}
