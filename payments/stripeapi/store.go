package stripeapi

import (
	"context"
	"crypto/rand"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// querier is what the store needs of a pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// errNotFound is returned when a row does not exist for the tenant.
var errNotFound = errors.New("not found")

// Names of the constraints the handlers translate into Stripe answers.
const (
	constraintOneAuthorisation = "payment_intents_one_authorisation"
	constraintRefundedCaptured = "payment_intents_refunded_le_captured"
)

const intentColumns = `id, amount, currency, status, capture_method, amount_captured, amount_refunded,
	coalesce(payment_method, ''), coalesce(charge_id, ''), coalesce(customer, ''), coalesce(description, ''),
	metadata, coalesce(cancellation_reason, ''), last_payment_error, created_at, canceled_at`

// intentScanTargets are the destinations of intentColumns, in order.
func intentScanTargets(r *intentRow) []any {
	return []any{&r.ID, &r.Amount, &r.Currency, &r.Status, &r.CaptureMethod, &r.AmountCaptured, &r.AmountRefunded,
		&r.PaymentMethod, &r.ChargeID, &r.Customer, &r.Description, &r.Metadata, &r.CancellationReason,
		&r.LastPaymentError, &r.CreatedAt, &r.CanceledAt}
}

func scanIntent(row pgx.Row) (intentRow, error) {
	var r intentRow
	err := row.Scan(intentScanTargets(&r)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return intentRow{}, errNotFound
	}
	return r, err
}

func collectIntents(rows pgx.Rows, err error) ([]intentRow, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (intentRow, error) { return scanIntent(r) })
}

// getIntent reads an intent of tenant; forUpdate locks it so that a state
// transition decided on what was read cannot race another one.
func getIntent(ctx context.Context, q querier, tenant, id string, forUpdate bool) (intentRow, error) {
	sql := `SELECT ` + intentColumns + ` FROM payment_intents WHERE tenant_id = $1 AND id = $2`
	if forUpdate {
		sql += ` FOR UPDATE`
	}
	return scanIntent(q.QueryRow(ctx, sql, tenant, id))
}

func getIntentByCharge(ctx context.Context, q querier, tenant, chargeID string) (intentRow, error) {
	return scanIntent(q.QueryRow(ctx, `SELECT `+intentColumns+` FROM payment_intents
		WHERE tenant_id = $1 AND charge_id = $2 FOR UPDATE`, tenant, chargeID))
}

// liveAuthorisation returns the requires_capture or succeeded intent of a
// booking step: the row the unique index admits at most once.
func liveAuthorisation(ctx context.Context, q querier, tenant, reference, step string) (intentRow, error) {
	return scanIntent(q.QueryRow(ctx, `SELECT `+intentColumns+` FROM payment_intents
		WHERE tenant_id = $1 AND booking_reference = $2 AND coalesce(step, '') = $3
		  AND status IN ('requires_capture', 'succeeded')`, tenant, reference, step))
}

// insertIntent inserts in a savepoint, so that a unique violation (a
// concurrent request with another key won the booking step) leaves the
// surrounding transaction, and its idempotency record, usable.
func insertIntent(ctx context.Context, tx pgx.Tx, tenant string, r intentRow, capturedAt *time.Time) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	_, err = sp.Exec(ctx, `INSERT INTO payment_intents
		(id, tenant_id, amount, currency, status, capture_method, amount_captured, payment_method, charge_id,
		 customer, description, metadata, last_payment_error, created_at, captured_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, nullif($8, ''), nullif($9, ''), nullif($10, ''), nullif($11, ''), $12, $13, $14, $15)`,
		r.ID, tenant, r.Amount, r.Currency, r.Status, r.CaptureMethod, r.AmountCaptured, r.PaymentMethod, r.ChargeID,
		r.Customer, r.Description, nonNilMap(r.Metadata), r.LastPaymentError, r.CreatedAt, capturedAt)
	if err != nil {
		_ = sp.Rollback(ctx)
		return err
	}
	return sp.Commit(ctx)
}

func captureIntent(ctx context.Context, q querier, tenant, id string, amount int64, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE payment_intents SET status = 'succeeded', amount_captured = $3, captured_at = $4
		WHERE tenant_id = $1 AND id = $2 AND status = 'requires_capture'`, tenant, id, amount, now)
	return err
}

func cancelIntent(ctx context.Context, q querier, tenant, id, reason string, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE payment_intents SET status = 'canceled', canceled_at = $3, cancellation_reason = nullif($4, '')
		WHERE tenant_id = $1 AND id = $2
		  AND status IN ('requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture')`, tenant, id, now, reason)
	return err
}

// addRefund records a refund and raises the intent's refunded total in one
// savepoint. The CHECK amount_refunded <= amount_captured is the last line
// should the caller's arithmetic on the locked row ever be wrong.
func addRefund(ctx context.Context, tx pgx.Tx, tenant string, r refundRow) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err = sp.Exec(ctx, `UPDATE payment_intents SET amount_refunded = amount_refunded + $3
		WHERE tenant_id = $1 AND id = $2`, tenant, r.PaymentIntentID, r.Amount); err == nil {
		_, err = sp.Exec(ctx, `INSERT INTO refunds (id, tenant_id, payment_intent_id, charge_id, amount, currency, status, reason, metadata, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, nullif($8, ''), $9, $10)`,
			r.ID, tenant, r.PaymentIntentID, r.ChargeID, r.Amount, r.Currency, r.Status, r.Reason, nonNilMap(r.Metadata), r.CreatedAt)
	}
	if err != nil {
		_ = sp.Rollback(ctx)
		return err
	}
	return sp.Commit(ctx)
}

func getRefund(ctx context.Context, q querier, tenant, id string) (refundRow, error) {
	var r refundRow
	err := q.QueryRow(ctx, `SELECT id, payment_intent_id, charge_id, amount, currency, status, coalesce(reason, ''), metadata, created_at
		FROM refunds WHERE tenant_id = $1 AND id = $2`, tenant, id).
		Scan(&r.ID, &r.PaymentIntentID, &r.ChargeID, &r.Amount, &r.Currency, &r.Status, &r.Reason, &r.Metadata, &r.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return refundRow{}, errNotFound
	}
	return r, err
}

// constraintViolation returns the SQLSTATE and constraint name of err.
func constraintViolation(err error) (code, name string) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code, pgErr.ConstraintName
	}
	return "", ""
}

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newID returns a Stripe-looking ID (prefix + 24 base62 characters, about
// 143 random bits). crypto/rand does not fail on supported platforms.
func newID(prefix string) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return prefix + string(b)
}

// cursor encodes a list position for Stripe's opaque search next_page.
func cursor(seq int64) string { return "page_" + strconv.FormatInt(seq, 36) }

func parseCursor(s string) (int64, bool) {
	if len(s) < 6 || s[:5] != "page_" {
		return 0, false
	}
	n, err := strconv.ParseInt(s[5:], 36, 64)
	return n, err == nil && n > 0
}
