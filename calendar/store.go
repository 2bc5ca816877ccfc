package calendar

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// querier is what the store needs of a pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// errNotFound is returned when a row does not exist for the tenant.
var errNotFound = errors.New("not found")

const reservationColumns = `id, status, resource_id, service, customer, reference, slot, hold_expires_at, coalesce(booking_id, ''), deliberate_second, created_at`

func scanReservation(row pgx.Row) (Hold, error) {
	var h Hold
	var slot pgtype.Range[pgtype.Timestamptz]
	err := row.Scan(&h.ID, &h.Status, &h.ResourceID, &h.Service, &h.Customer, &h.Reference, &slot, &h.ExpiresAt, &h.BookingID, &h.DeliberateSecond, &h.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Hold{}, errNotFound
	}
	if err != nil {
		return Hold{}, err
	}
	h.Object = "hold"
	h.Start, h.End = slot.Lower.Time.UTC(), slot.Upper.Time.UTC()
	h.ExpiresAt, h.CreatedAt = h.ExpiresAt.UTC(), h.CreatedAt.UTC()
	return h, nil
}

func bookingOf(h Hold) Booking {
	status := BookingConfirmed
	if h.Status != HoldConfirmed {
		status = BookingCancelled
	}
	return Booking{
		ID: h.BookingID, Object: "booking", Status: status, HoldID: h.ID, ResourceID: h.ResourceID,
		Service: h.Service, Customer: h.Customer, Reference: h.Reference, Start: h.Start, End: h.End, CreatedAt: h.CreatedAt,
	}
}

func slotRange(start, end time.Time) pgtype.Range[pgtype.Timestamptz] {
	return pgtype.Range[pgtype.Timestamptz]{
		Lower: pgtype.Timestamptz{Time: start, Valid: true}, Upper: pgtype.Timestamptz{Time: end, Valid: true},
		LowerType: pgtype.Inclusive, UpperType: pgtype.Exclusive, Valid: true,
	}
}

func newID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// expireHolds marks lapsed holds expired so they stop blocking their slot
// and their reference. It runs inside the caller's transaction before any
// decision that depends on active reservations.
func expireHolds(ctx context.Context, q querier, tenant string, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE calendar_reservations SET status = 'expired', updated_at = $2
		WHERE tenant_id = $1 AND status = 'held' AND hold_expires_at <= $2`, tenant, now)
	if err != nil {
		return fmt.Errorf("expire holds: %w", err)
	}
	return nil
}

func getReservation(ctx context.Context, q querier, tenant, id string, forUpdate bool) (Hold, error) {
	sql := `SELECT ` + reservationColumns + ` FROM calendar_reservations WHERE tenant_id = $1 AND id = $2`
	if forUpdate {
		sql += ` FOR UPDATE`
	}
	return scanReservation(q.QueryRow(ctx, sql, tenant, id))
}

func getByBookingID(ctx context.Context, q querier, tenant, id string, forUpdate bool) (Hold, error) {
	sql := `SELECT ` + reservationColumns + ` FROM calendar_reservations WHERE tenant_id = $1 AND booking_id = $2`
	if forUpdate {
		sql += ` FOR UPDATE`
	}
	return scanReservation(q.QueryRow(ctx, sql, tenant, id))
}

func activeByReference(ctx context.Context, q querier, tenant, reference string) (Hold, error) {
	return scanReservation(q.QueryRow(ctx, `SELECT `+reservationColumns+` FROM calendar_reservations
		WHERE tenant_id = $1 AND reference = $2 AND status IN ('held', 'confirmed') FOR UPDATE`, tenant, reference))
}

// insertHold inserts in a savepoint so that a constraint violation leaves
// the surrounding transaction (and its idempotency record) usable.
func insertHold(ctx context.Context, tx pgx.Tx, tenant string, h Hold) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	_, err = sp.Exec(ctx, `INSERT INTO calendar_reservations
		(id, tenant_id, resource_id, service, customer, reference, slot, status, hold_expires_at, deliberate_second, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'held', $8, $9, $10, $10)`,
		h.ID, tenant, h.ResourceID, h.Service, h.Customer, h.Reference, slotRange(h.Start, h.End), h.ExpiresAt, h.DeliberateSecond, h.CreatedAt)
	if err != nil {
		_ = sp.Rollback(ctx)
		return err
	}
	return sp.Commit(ctx)
}

func setStatus(ctx context.Context, q querier, tenant, id string, status HoldStatus, bookingID string, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE calendar_reservations SET status = $3, booking_id = coalesce(nullif($4, ''), booking_id), updated_at = $5
		WHERE tenant_id = $1 AND id = $2`, tenant, id, string(status), bookingID, now)
	return err
}

// constraintViolation names the violated constraint, or "".
func constraintViolation(err error) (code, name string) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code, pgErr.ConstraintName
	}
	return "", ""
}

func loadService(ctx context.Context, q querier, tenant, id string) (Service, error) {
	var s Service
	err := q.QueryRow(ctx, `SELECT id, name, duration_minutes FROM calendar_services WHERE tenant_id = $1 AND id = $2 AND retired_at IS NULL`, tenant, id).
		Scan(&s.ID, &s.Name, &s.DurationMinutes)
	if errors.Is(err, pgx.ErrNoRows) {
		return Service{}, errNotFound
	}
	return s, err
}

func loadResources(ctx context.Context, q querier, tenant string) ([]Resource, error) {
	rows, err := q.Query(ctx, `SELECT id, name, kind, to_char(opens_at, 'HH24:MI'), to_char(closes_at, 'HH24:MI'), weekdays
		FROM calendar_resources WHERE tenant_id = $1 AND retired_at IS NULL ORDER BY id`, tenant)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Resource, error) {
		var res Resource
		var days []int16
		if err := r.Scan(&res.ID, &res.Name, &res.Kind, &res.Opens, &res.Closes, &days); err != nil {
			return res, err
		}
		for _, d := range days {
			res.Weekdays = append(res.Weekdays, int(d))
		}
		return res, nil
	})
}

func loadServices(ctx context.Context, q querier, tenant string) ([]Service, error) {
	rows, err := q.Query(ctx, `SELECT id, name, duration_minutes FROM calendar_services WHERE tenant_id = $1 AND retired_at IS NULL ORDER BY id`, tenant)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Service])
}

// busy returns the active reservations of a resource overlapping [from,
// to), and its blocks (what staff entered in the shop's calendar).
func busy(ctx context.Context, q querier, tenant, resource string, from, to, now time.Time) ([][2]time.Time, error) {
	rows, err := q.Query(ctx, `SELECT lower(slot), upper(slot) FROM calendar_reservations
		WHERE tenant_id = $1 AND resource_id = $2 AND slot && $3
		  AND (status = 'confirmed' OR (status = 'held' AND hold_expires_at > $4))
		UNION ALL SELECT lower(slot), upper(slot) FROM calendar_blocks
		WHERE tenant_id = $1 AND resource_id = $2 AND slot && $3 ORDER BY 1`,
		tenant, resource, slotRange(from, to), now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]time.Time, error) {
		var iv [2]time.Time
		err := r.Scan(&iv[0], &iv[1])
		return iv, err
	})
}
