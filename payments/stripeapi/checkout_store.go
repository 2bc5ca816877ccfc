package stripeapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/payments"
)

// lineItem is one line of a session, from its price_data.
type lineItem struct {
	Name       string `json:"name"`
	UnitAmount int64  `json:"unit_amount"`
	Quantity   int64  `json:"quantity"`
}

// sessionRow is a checkout_sessions row with the status of its intent.
type sessionRow struct {
	ID, Tenant, Status            string
	AmountTotal                   int64
	Currency                      string
	LineItems                     []lineItem
	URL, SuccessURL, CancelURL    string
	ClientReferenceID, Locale     string
	Metadata                      map[string]string
	CaptureMethod, Description    string
	IntentMetadata                map[string]string
	PaymentIntentID, IntentStatus string
	LastError                     string
	CreatedAt, ExpiresAt          time.Time
}

const sessionColumns = `s.id, s.tenant_id, s.status, s.amount_total, s.currency, s.line_items, s.url, s.success_url,
	coalesce(s.cancel_url, ''), coalesce(s.client_reference_id, ''), s.locale, s.metadata, s.capture_method,
	coalesce(s.description, ''), s.intent_metadata, coalesce(s.payment_intent_id, ''), coalesce(p.status, ''),
	coalesce(s.last_error, ''), s.created_at, s.expires_at`

// sessionByID reads a session of any tenant (the hosted page knows only
// the ID, which is its capability); lock also locks the session row.
func sessionByID(ctx context.Context, q querier, id string, lock bool) (sessionRow, error) {
	sql := `SELECT ` + sessionColumns + ` FROM checkout_sessions s
		LEFT JOIN payment_intents p ON p.tenant_id = s.tenant_id AND p.id = s.payment_intent_id WHERE s.id = $1`
	if lock {
		sql += ` FOR UPDATE OF s`
	}
	var r sessionRow
	err := q.QueryRow(ctx, sql, id).Scan(&r.ID, &r.Tenant, &r.Status, &r.AmountTotal, &r.Currency, &r.LineItems, &r.URL,
		&r.SuccessURL, &r.CancelURL, &r.ClientReferenceID, &r.Locale, &r.Metadata, &r.CaptureMethod, &r.Description,
		&r.IntentMetadata, &r.PaymentIntentID, &r.IntentStatus, &r.LastError, &r.CreatedAt, &r.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return sessionRow{}, errNotFound
	}
	return r, err
}

// getSession reads a session of tenant.
func getSession(ctx context.Context, q querier, tenant, id string, lock bool) (sessionRow, error) {
	r, err := sessionByID(ctx, q, id, lock)
	if err == nil && r.Tenant != tenant {
		return sessionRow{}, errNotFound
	}
	return r, err
}

func insertSession(ctx context.Context, q querier, r sessionRow) error {
	_, err := q.Exec(ctx, `INSERT INTO checkout_sessions (id, tenant_id, status, amount_total, currency, line_items, url,
		success_url, cancel_url, client_reference_id, locale, metadata, capture_method, description, intent_metadata,
		created_at, expires_at)
		VALUES ($1, $2, 'open', $3, $4, $5, $6, $7, nullif($8, ''), nullif($9, ''), $10, $11, $12, nullif($13, ''), $14, $15, $16)`,
		r.ID, r.Tenant, r.AmountTotal, r.Currency, r.LineItems, r.URL, r.SuccessURL, r.CancelURL, r.ClientReferenceID,
		r.Locale, nonNilMap(r.Metadata), r.CaptureMethod, r.Description, nonNilMap(r.IntentMetadata), r.CreatedAt, r.ExpiresAt)
	return err
}

// due reports whether an open session has passed its expires_at.
func (r sessionRow) due(now time.Time) bool {
	return r.Status == payments.SessionOpen && !now.Before(r.ExpiresAt)
}

// expireSession expires the locked open session r and records
// checkout.session.expired in tx. The status condition and the events'
// once-only index make a second expiry impossible, not merely unlikely.
func expireSession(ctx context.Context, tx pgx.Tx, r *sessionRow, src eventSource, now time.Time) error {
	tag, err := tx.Exec(ctx, `UPDATE checkout_sessions SET status = 'expired', expired_at = $2 WHERE id = $1 AND status = 'open'`, r.ID, now)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("expire %s: session is %s, not open", r.ID, r.Status)
	}
	r.Status = payments.SessionExpired
	return recordEvent(ctx, tx, r.Tenant, EventCheckoutExpired, r.ID, r.object(), src, now)
}

// completeSession completes the locked open session r, whose intent was
// just authorised or charged, and records checkout.session.completed.
func completeSession(ctx context.Context, tx pgx.Tx, r *sessionRow, intentStatus string, now time.Time) error {
	tag, err := tx.Exec(ctx, `UPDATE checkout_sessions SET status = 'complete', completed_at = $2, last_error = NULL
		WHERE id = $1 AND status = 'open'`, r.ID, now)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("complete %s: session is %s, not open", r.ID, r.Status)
	}
	r.Status, r.IntentStatus, r.LastError = payments.SessionComplete, intentStatus, ""
	return recordEvent(ctx, tx, r.Tenant, EventCheckoutCompleted, r.ID, r.object(), eventSource{}, now)
}

// attachIntent records the session's intent and the last decline shown on
// its page.
func attachIntent(ctx context.Context, q querier, r *sessionRow, intentID, lastError string) error {
	_, err := q.Exec(ctx, `UPDATE checkout_sessions SET payment_intent_id = $2, last_error = nullif($3, '') WHERE id = $1`,
		r.ID, intentID, lastError)
	r.PaymentIntentID, r.LastError = intentID, lastError
	return err
}

// refreshExpiry reads a session and, if it is open past its expires_at,
// expires it first (lazy expiry): whoever looks first records the one
// expired event.
func refreshExpiry(ctx context.Context, pool *pgxpool.Pool, r sessionRow, now time.Time) (sessionRow, error) {
	if !r.due(now) {
		return r, nil
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		locked, err := sessionByID(ctx, tx, r.ID, true)
		if err != nil {
			return err
		}
		if locked.due(now) {
			if err := expireSession(ctx, tx, &locked, eventSource{}, now); err != nil {
				return err
			}
		}
		r = locked
		return nil
	})
	return r, err
}

// ExpireDue expires up to limit open sessions past their expires_at, each
// with its checkout.session.expired event, so that a link nobody opens
// again still reports its expiry. Concurrent sweepers skip each other's
// rows.
func ExpireDue(ctx context.Context, pool *pgxpool.Pool, now time.Time, limit int) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM checkout_sessions WHERE status = 'open' AND expires_at <= $1
			ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, id := range ids {
			r, err := sessionByID(ctx, tx, id, false) // locked above
			if err != nil {
				return err
			}
			if err := expireSession(ctx, tx, &r, eventSource{}, now); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("expire due checkout sessions: %w", err)
	}
	return n, nil
}
