package tenants

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// DryRun computes and checks the diff, and writes nothing.
	DryRun bool
	// OnlyIfEmpty applies the file only to a database without any tenant:
	// the development stack seeds the demo tenant this way without undoing
	// what a developer applied since.
	OnlyIfEmpty bool
	// Now is the clock that decides which bookings are in the future
	// (default time.Now).
	Now func() time.Time
}

// applyLock serialises concurrent applies: each reads the state it diffs
// against under the lock, so two never interleave their writes.
const applyLock = "bookonce.tenants.apply"

// Apply makes the database hold exactly the tenants of f, in one
// transaction, and returns what it changed. The file is the whole truth:
// resources, services, numbers, tokens, templates and policies it no
// longer lists are removed, and so are tenants it no longer lists.
//
// Nothing a customer relies on disappears silently: a removal of a tenant,
// resource or service that a future booking (held or confirmed, slot not
// yet over) uses is refused with a *BlockedError naming the bookings.
// Resources and services that only past reservations refer to are retired
// (kept for the history, offered to nobody) instead of deleted.
//
// Applying the same file twice writes nothing the second time and returns
// an empty Diff. An invalid file returns a *ValidationError.
func Apply(ctx context.Context, pool *pgxpool.Pool, f File, opts ApplyOptions) (Diff, error) {
	if err := Validate(f); err != nil {
		return Diff{}, err
	}
	want := normalise(f)
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	var diff Diff
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, applyLock); err != nil {
			return fmt.Errorf("lock tenants: %w", err)
		}
		if opts.OnlyIfEmpty {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM tenants`).Scan(&n); err != nil {
				return fmt.Errorf("count tenants: %w", err)
			}
			if n > 0 {
				return nil
			}
		}
		have, err := loadState(ctx, tx)
		if err != nil {
			return err
		}
		p := makePlan(want, have)
		diff = p.diff
		if err := p.checkBookings(ctx, tx, now()); err != nil {
			return err
		}
		if p.diff.Empty() || opts.DryRun {
			return errRollback
		}
		return p.write(ctx, tx, now())
	})
	if errors.Is(err, errRollback) {
		return diff, nil
	}
	if err != nil {
		return diff, err
	}
	return diff, nil
}

// errRollback ends a transaction that wrote nothing (a dry run, or a file
// the database already holds) without committing.
var errRollback = errors.New("nothing to write")

// checkBookings refuses the plan if a removed tenant, resource or service
// has active reservations whose slot is not over.
func (p *plan) checkBookings(ctx context.Context, tx pgx.Tx, now time.Time) error {
	if len(p.removedSubjects) == 0 {
		return nil
	}
	var resources, services []string
	for _, r := range p.removeResources {
		resources = append(resources, r.tenant+"/"+r.id)
	}
	for _, s := range p.removeServices {
		services = append(services, s.tenant+"/"+s.id)
	}
	rows, err := tx.Query(ctx, `SELECT tenant_id, coalesce(booking_id, id), reference, resource_id, service, status, lower(slot)
		FROM calendar_reservations
		WHERE upper(slot) > $1 AND (status = 'confirmed' OR (status = 'held' AND hold_expires_at > $1))
		  AND (tenant_id = ANY($2) OR tenant_id || '/' || resource_id = ANY($3) OR tenant_id || '/' || service = ANY($4))
		ORDER BY tenant_id, lower(slot), id LIMIT 100`, now, p.removeTenants, resources, services)
	if err != nil {
		return fmt.Errorf("look for future bookings: %w", err)
	}
	var b Booking
	var start time.Time
	var found []Booking
	_, err = pgx.ForEachRow(rows, []any{&b.Tenant, &b.ID, &b.Reference, &b.Resource, &b.Service, &b.Status, &start}, func() error {
		b.Slot = start.UTC().Format(time.RFC3339)
		found = append(found, b)
		return nil
	})
	if err != nil {
		return fmt.Errorf("look for future bookings: %w", err)
	}
	if len(found) > 0 {
		return &BlockedError{Removals: p.blockedSubjects(found), Bookings: found}
	}
	return nil
}

// blockedSubjects names what each booking keeps from being removed: its
// tenant if that goes, else its resource or service.
func (p *plan) blockedSubjects(found []Booking) []string {
	var out []string
	for _, b := range found {
		var s string
		switch {
		case slices.Contains(p.removeTenants, b.Tenant):
			s = "tenant " + b.Tenant
		case slices.Contains(p.removeResources, ref{b.Tenant, b.Resource}):
			s = "resource " + b.Tenant + "/" + b.Resource
		default:
			s = "service " + b.Tenant + "/" + b.Service
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
