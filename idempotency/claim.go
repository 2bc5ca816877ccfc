package idempotency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// outcome is what the claim transaction decided for a request.
type outcome int

const (
	claimed     outcome = iota // run the handler
	replay                     // answer the stored response
	inFlight                   // 409: another request holds the key
	mismatch                   // 422: the key was used with another payload
	rateLimited                // 429: the tenant's quota of new keys is used up
)

// scope identifies a key: tenant + operation + key (rule 2).
type scope struct{ tenant, operation, key string }

// claim is the result of the claim transaction.
type claim struct {
	outcome  outcome
	owner    [16]byte  // our token when claimed
	until    time.Time // lease end (inFlight) or quota window end (rateLimited)
	takeover bool      // claimed by taking over an expired lease
	status   int
	headers  http.Header
	body     []byte
}

// claimSQL inserts a pending row, or replaces a row whose retention has
// ended (expired but not reaped yet): that request is new again. RETURNING
// yields a row only when we got the key, so the decision is one atomic
// statement and never check-then-insert.
const claimSQL = `INSERT INTO idempotency_keys AS k
		(tenant_id, operation, idempotency_key, fingerprint, state, owner, locked_until, created_at, expires_at)
	VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8)
	ON CONFLICT (tenant_id, operation, idempotency_key) DO UPDATE SET
		fingerprint = EXCLUDED.fingerprint, state = 'pending', owner = EXCLUDED.owner,
		locked_until = EXCLUDED.locked_until, status_code = NULL, response_headers = NULL,
		response_body = NULL, resource_type = NULL, resource_id = NULL, replays = 0,
		lease_takeovers = 0, created_at = EXCLUDED.created_at, completed_at = NULL,
		expires_at = EXCLUDED.expires_at
	WHERE k.expires_at <= $7
	RETURNING true`

// claim decides, in its own short transaction, whether this request runs.
// The transaction commits before the handler starts, so the pending row is
// visible to every concurrent retry while the handler works.
func (s *Store) claim(ctx context.Context, sc scope, fp [32]byte) (c claim, err error) {
	start := time.Now()
	defer func() { s.metrics.ClaimSeconds.WithLabelValues(sc.operation).Observe(time.Since(start).Seconds()) }()
	// A row can vanish between the upsert and the read (its holder released
	// it); then the upsert wins on the next round. Three rounds are plenty.
	for range 3 {
		c, retry, err := s.claimOnce(ctx, sc, fp)
		if err != nil || !retry {
			return c, err
		}
	}
	return claim{}, errors.New("idempotency: claim did not settle")
}

func (s *Store) claimOnce(ctx context.Context, sc scope, fp [32]byte) (c claim, retry bool, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return c, false, fmt.Errorf("idempotency: begin claim: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }() // no-op after Commit
	now := s.now()
	owner := newOwner()
	lease := now.Add(s.lease)

	var got bool
	err = tx.QueryRow(ctx, claimSQL, sc.tenant, sc.operation, sc.key, fp[:], owner, lease, now, now.Add(s.ttl)).Scan(&got)
	switch {
	case err == nil:
		if s.quota > 0 {
			over, err := s.overQuota(ctx, tx, sc.tenant, now)
			if err != nil {
				return c, false, err
			}
			if over {
				// Rolling back also undoes the pending row: nothing stored.
				return claim{outcome: rateLimited, until: now.Truncate(time.Minute).Add(time.Minute)}, false, nil
			}
		}
		if err := tx.Commit(ctx); err != nil {
			return c, false, fmt.Errorf("idempotency: commit claim: %w", err)
		}
		return claim{outcome: claimed, owner: owner}, false, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return c, false, fmt.Errorf("idempotency: claim key: %w", err)
	}

	// The key is live. Lock the row so that its state cannot change under
	// the decision below.
	var (
		storedFP   []byte
		state      string
		oldOwner   [16]byte
		lockedTill time.Time
		status     *int32
		headers    map[string][]string
		body       []byte
	)
	err = tx.QueryRow(ctx, `SELECT fingerprint, state, owner, locked_until, status_code, response_headers, response_body
		FROM idempotency_keys WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3 FOR UPDATE`,
		sc.tenant, sc.operation, sc.key).Scan(&storedFP, &state, &oldOwner, &lockedTill, &status, &headers, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, true, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("idempotency: read key: %w", err)
	}

	switch {
	case !bytes.Equal(storedFP, fp[:]):
		// Checked first: a different payload is an error whatever the
		// state, and must never be answered with another request's result.
		return claim{outcome: mismatch}, false, nil
	case state == StateCompleted:
		if _, err := tx.Exec(ctx, `UPDATE idempotency_keys SET replays = replays + 1
			WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3`, sc.tenant, sc.operation, sc.key); err != nil {
			return c, false, fmt.Errorf("idempotency: count replay: %w", err)
		}
		if err := tx.Commit(ctx); err != nil {
			return c, false, fmt.Errorf("idempotency: commit replay: %w", err)
		}
		c = claim{outcome: replay, headers: http.Header(headers), body: body}
		if status != nil {
			c.status = int(*status)
		}
		return c, false, nil
	case lockedTill.After(now):
		return claim{outcome: inFlight, until: lockedTill}, false, nil
	}

	// Pending with an expired lease: its holder crashed or is too slow. Take
	// it over conditionally; the old holder's completion is fenced by owner.
	tag, err := tx.Exec(ctx, `UPDATE idempotency_keys
		SET owner = $4, locked_until = $5, lease_takeovers = lease_takeovers + 1
		WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3
		  AND state = 'pending' AND owner = $6 AND locked_until <= $7`,
		sc.tenant, sc.operation, sc.key, owner, lease, oldOwner, now)
	if err != nil {
		return c, false, fmt.Errorf("idempotency: take over lease: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return claim{outcome: inFlight, until: lease}, false, nil
	}
	if err := tx.Commit(ctx); err != nil {
		return c, false, fmt.Errorf("idempotency: commit takeover: %w", err)
	}
	return claim{outcome: claimed, owner: owner, takeover: true}, false, nil
}

// overQuota counts one new key for tenant in the current minute and
// reports whether that exceeds the quota. The upsert row lock serialises
// concurrent claims of one tenant, so the count is exact across processes.
func (s *Store) overQuota(ctx context.Context, tx pgx.Tx, tenant string, now time.Time) (bool, error) {
	var n int
	err := tx.QueryRow(ctx, `INSERT INTO idempotency_quota (tenant_id, minute, claims) VALUES ($1, $2, 1)
		ON CONFLICT (tenant_id, minute) DO UPDATE SET claims = idempotency_quota.claims + 1
		RETURNING claims`, tenant, now.Truncate(time.Minute)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("idempotency: count quota: %w", err)
	}
	return n > s.quota, nil
}

// release deletes our pending row so that a retry runs anew. It is
// conditional on our owner token and on the row still being pending: a
// completed row (our commit did land after all) or a row taken over by
// another request is left alone.
func (s *Store) release(sc scope, owner [16]byte) {
	// Detached from the request: a client that hung up must not leave the
	// key blocked until its lease ends.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3 AND owner = $4 AND state = 'pending'`,
		sc.tenant, sc.operation, sc.key, owner)
	if err != nil {
		// Not fatal: the row stays pending until its lease ends, then the
		// next retry takes it over. Retries get 409 until then.
		slog.Error("idempotency: release key", "operation", sc.operation, "err", err)
	}
}
