package shopcal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/outcome"
)

// Defaults of the mirror: how far ahead it reads (bookings further out
// are re-checked when they are held), how long one resource's read may
// take, how many calendars it reads at once, and how far the hold step's
// re-check reaches from the wished start.
const (
	DefaultHorizon = 60 * 24 * time.Hour
	readTimeout    = 20 * time.Second
	parallelReads  = 8
	holdWindow     = 24 * time.Hour
)

// Mirror copies what staff entered in each resource's own calendar into
// bookonce's calendar as blocks (calendar.Block): availability skips
// them and a hold on them is refused. A block over a booking made earlier
// is a conflict: bookonce changes neither, and Conflict is told (it opens
// a case for a person; it is told again on every refresh while the
// conflict stands, so it must open each case once).
type Mirror struct {
	// Calendars finds the shop's calendar of a resource (ok false: none).
	Calendars func(tenant, resource string) (p Provider, ok bool, err error)
	// Resources lists, per tenant, the resources with a calendar of the
	// shop's; Tenants lists the tenants.
	Resources func(tenant string) []string
	Tenants   func() []string
	// Zone is a tenant's time zone (all-day events are its whole days).
	Zone func(tenant string) *time.Location
	// Blocks stores a window's blocks of a resource in bookonce's calendar
	// (calendar.Client.ReplaceBlocks for the tenant).
	Blocks func(ctx context.Context, tenant, resource string, req calendar.BlocksRequest) (calendar.BlocksResult, error)
	// Conflict is told of a confirmed booking a block lies over.
	Conflict func(ctx context.Context, tenant string, c calendar.Conflict) error
	// Horizon is how far ahead Sweep reads; zero: DefaultHorizon.
	Horizon time.Duration
	// Unreachable is told of a calendar that refused for good (consent
	// withdrawn, the calendar deleted, credentials refused): what staff
	// enter there no longer blocks anything until a person reconnects it,
	// so it opens a case. Told again at every sweep while it lasts.
	Unreachable func(ctx context.Context, tenant, resource string, err error) error
	// Push, when set, keeps a push channel open on every calendar that
	// offers one (Watcher) and reads a calendar again as soon as the
	// gateway hears it changed; nil: polling only.
	Push *Push
	Now  func() time.Time
	Log  *slog.Logger

	push pushState
}

// Refresh reads the resource's calendar over [from, to) and stores what
// it shows busy as the window's blocks, replacing what was mirrored
// there, then tells Conflict of every booking a block lies over.
func (m *Mirror) Refresh(ctx context.Context, tenant, resource string, from, to time.Time) error {
	p, ok, err := m.Calendars(tenant, resource)
	if !ok && err == nil {
		return nil // no calendar of the shop's: nothing to mirror, nothing to count
	}
	if err == nil {
		err = m.refresh(ctx, tenant, resource, p, from, to)
	}
	observe(tenant, resource, m.now(), err)
	if err != nil && outcome.Of(err) == outcome.Final && m.Unreachable != nil {
		if cerr := m.Unreachable(ctx, tenant, resource, err); cerr != nil {
			err = errors.Join(err, fmt.Errorf("open its case: %w", cerr))
		}
	}
	return err
}

func (m *Mirror) refresh(ctx context.Context, tenant, resource string, p Provider, from, to time.Time) error {
	busy, err := p.Busy(ctx, from, to, m.zone(tenant))
	if err != nil && outcome.Of(err) != outcome.Final && ctx.Err() == nil {
		// A read is safe to repeat at once, and a transient failure (a
		// kept-alive connection the server closed just as the sweep
		// reused it) should not cost a whole poll interval of lag.
		busy, err = p.Busy(ctx, from, to, m.zone(tenant))
	}
	if err != nil {
		return err
	}
	req := calendar.BlocksRequest{From: from, To: to, Blocks: make([]calendar.Block, 0, len(busy))}
	for _, b := range busy {
		req.Blocks = append(req.Blocks, calendar.Block{UID: b.UID, Start: b.Start.UTC(), End: b.End.UTC()})
	}
	res, err := m.Blocks(ctx, tenant, resource, req)
	if err != nil {
		return fmt.Errorf("store the blocks of %s/%s: %w", tenant, resource, err)
	}
	var errs []error
	for _, c := range res.Conflicts {
		if err := m.Conflict(ctx, tenant, c); err != nil {
			errs = append(errs, fmt.Errorf("conflict of booking %s: %w", c.Booking.ID, err))
		}
	}
	return errors.Join(errs...)
}

// BeforeHold is the hold step's re-check: the calendars of the resources
// a hold at start may take (resource, or every one with a calendar when
// it is "") are read again for the day from start, so a hold is refused
// on what staff entered a moment ago, not only on what the last sweep
// saw. A calendar that does not answer within the timeout leaves the
// mirror as it was (the sweep's conflict check stands behind it); the
// error is returned for the caller to log.
func (m *Mirror) BeforeHold(ctx context.Context, tenant, resource string, start time.Time, timeout time.Duration) error {
	resources := []string{resource}
	if resource == "" {
		resources = m.Resources(tenant)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var g errgroup.Group
	for _, r := range resources {
		g.Go(func() error { return m.Refresh(ctx, tenant, r, start, start.Add(holdWindow)) })
	}
	return g.Wait()
}

// Sweep refreshes every resource with a calendar from now to the horizon,
// several at once, each bounded: one shop's calendar that hangs does not
// hold up another's. It returns the failures joined.
func (m *Mirror) Sweep(ctx context.Context) error {
	from := m.now().Truncate(time.Minute)
	to := from.Add(m.horizon())
	var g errgroup.Group
	g.SetLimit(parallelReads)
	for _, t := range m.Tenants() {
		for _, r := range m.Resources(t) {
			g.Go(func() error {
				rctx, cancel := context.WithTimeout(ctx, readTimeout)
				defer cancel()
				if m.Push != nil {
					// First, so a change after the channel is in place
					// is notified and one before it is read now.
					m.watch(rctx, t, r)
				}
				return m.Refresh(rctx, t, r, from, to)
			})
		}
	}
	return g.Wait()
}

// Run sweeps every interval until ctx ends, logging failures (the ops
// page shows them per resource), and with Push reads a calendar again
// whenever the gateway hears it changed.
func (m *Mirror) Run(ctx context.Context, every time.Duration) {
	if m.Push != nil {
		// Listening before the first sweep opens the channels: nothing
		// they announce is missed.
		ready := make(chan struct{})
		go m.listen(ctx, ready)
		select {
		case <-ready:
		case <-ctx.Done():
		case <-time.After(10 * time.Second): // the database is slow: the poll goes on
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := m.Sweep(ctx); err != nil && ctx.Err() == nil {
			m.log().Warn("shop calendars: sweep failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (m *Mirror) zone(tenant string) *time.Location {
	if m.Zone != nil {
		if loc := m.Zone(tenant); loc != nil {
			return loc
		}
	}
	return time.UTC
}

func (m *Mirror) horizon() time.Duration {
	if m.Horizon > 0 {
		return m.Horizon
	}
	return DefaultHorizon
}

func (m *Mirror) now() time.Time {
	if m.Now != nil {
		return m.Now().UTC()
	}
	return time.Now().UTC()
}

func (m *Mirror) log() *slog.Logger {
	if m.Log != nil {
		return m.Log
	}
	return slog.Default()
}
