package idempotency

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// Lookup returns the record of a live key, or ErrNotFound when the key was
// never used, was released (its request failed before a decision), or has
// expired. It backs GET /v1/operations/{key}?operation=...: after an
// unknown outcome a client asks what its key did instead of guessing.
func (s *Store) Lookup(ctx context.Context, tenant, operation, key string) (Record, error) {
	rec := Record{Tenant: tenant, Operation: operation, Key: key}
	var status *int32
	var resType, resID *string
	var sealed []byte
	err := s.pool.QueryRow(ctx, `SELECT state, status_code, response_body, sealed, resource_type, resource_id,
			created_at, expires_at, replays
		FROM idempotency_keys
		WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3 AND expires_at > $4`,
		tenant, operation, key, s.now()).
		Scan(&rec.State, &status, &rec.Body, &sealed, &resType, &resID, &rec.CreatedAt, &rec.ExpiresAt, &rec.Replays)
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("idempotency: look up key: %w", err)
	}
	if rec.Body, err = s.openBody(scope{tenant, operation, key}, rec.Body, sealed); err != nil {
		return Record{}, fmt.Errorf("idempotency: look up key: %w: %w", errUnreadable, err)
	}
	if status != nil {
		rec.StatusCode = int(*status)
	}
	if resType != nil {
		rec.ResourceType = *resType
	}
	if resID != nil {
		rec.ResourceID = *resID
	}
	return rec, nil
}

// Reap deletes up to batch expired keys and returns how many it deleted.
// It locks only rows nobody else holds (FOR UPDATE SKIP LOCKED) and works
// in one short statement, so it never waits for, or blocks, a request that
// is reclaiming an expired key at the same moment. Call it repeatedly (see
// RunReaper) rather than with a huge batch. It also drops quota counters of
// past minutes.
func (s *Store) Reap(ctx context.Context, batch int) (int, error) {
	if batch <= 0 {
		batch = 500
	}
	now := s.now()
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys k
		USING (SELECT tenant_id, operation, idempotency_key FROM idempotency_keys
		       WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) x
		WHERE k.tenant_id = x.tenant_id AND k.operation = x.operation AND k.idempotency_key = x.idempotency_key
		  AND k.expires_at <= $1`, now, batch)
	if err != nil {
		return 0, fmt.Errorf("idempotency: reap keys: %w", err)
	}
	n := int(tag.RowsAffected())
	s.metrics.ExpiredDeleted.Add(float64(n))
	// The counters only matter for the current minute; keep one spare.
	if _, err := s.pool.Exec(ctx, `DELETE FROM idempotency_quota WHERE minute < $1`,
		now.Truncate(time.Minute).Add(-time.Minute)); err != nil {
		return n, fmt.Errorf("idempotency: reap quota counters: %w", err)
	}
	return n, nil
}

// RunReaper calls Reap at once and then every interval until ctx ends.
// When a batch comes back full it continues at once, so a backlog drains in small
// transactions instead of one long lock. Errors are logged, not fatal: the
// next tick retries and expired rows only cost space meanwhile.
func (s *Store) RunReaper(ctx context.Context, interval time.Duration) {
	const batch = 500
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for ctx.Err() == nil {
			n, err := s.Reap(ctx, batch)
			if err != nil {
				if ctx.Err() == nil {
					slog.ErrorContext(ctx, "idempotency reaper", "err", err)
				}
				break
			}
			if n < batch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// newOwner returns a random claim token. crypto/rand never fails on
// supported platforms (Go 1.24+ crashes instead of returning an error).
func newOwner() [16]byte {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40 // a version 4 UUID, as the column type is uuid
	b[8] = (b[8] & 0x3f) | 0x80
	return b
}
