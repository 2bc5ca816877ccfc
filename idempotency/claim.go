package idempotency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	sess     *session  // when claimed: the handler's transaction, begun
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
//
// RETURNING also switches this transaction to asynchronous commit
// (set_config(..., true) lasts until the transaction ends, and commit reads
// it after the statement): a claim's commit does not wait for its WAL
// flush. That is safe because a claim is only worth something together
// with its completion, and the completion commits synchronously in the
// handler's transaction, whose WAL flush covers every earlier record,
// this claim included. If PostgreSQL crashes before that, the claim and
// the handler's effect are lost together: as if the claim had been
// released, and the retry runs anew. Visibility is unaffected: concurrent
// requests see the pending row as soon as the claim commits.
const claimSQL = `INSERT INTO idempotency_keys AS k
		(tenant_id, operation, idempotency_key, fingerprint, state, owner, locked_until, created_at, expires_at)
	VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8)
	ON CONFLICT (tenant_id, operation, idempotency_key) DO UPDATE SET
		fingerprint = EXCLUDED.fingerprint, state = 'pending', owner = EXCLUDED.owner,
		locked_until = EXCLUDED.locked_until, status_code = NULL, response_headers = NULL,
		response_body = NULL, sealed = NULL, resource_type = NULL, resource_id = NULL, replays = 0,
		lease_takeovers = 0, created_at = EXCLUDED.created_at, completed_at = NULL,
		expires_at = EXCLUDED.expires_at
	WHERE k.expires_at <= $7
	RETURNING set_config('synchronous_commit', 'off', true) = 'off'`

// quotaMarker names the error claimQuotaSQL raises over the quota.
const quotaMarker = "idempotency quota exceeded"

// claimQuotaSQL is claimSQL and, only when it claimed, one more new key in
// the tenant's counter of this minute ($9), in one statement. It returns
// whether it claimed; over the quota ($10) it raises quotaMarker, which
// aborts the transaction: the COMMIT queued behind it does not run and
// nothing is stored. The counter's row lock serialises concurrent claims
// of one tenant until commit, so the count is exact across processes.
const claimQuotaSQL = `WITH claimed AS (` + claimSQL + ` AS got),
	counted AS (INSERT INTO idempotency_quota AS q (tenant_id, minute, claims) SELECT $1, $9, 1 FROM claimed
		ON CONFLICT (tenant_id, minute) DO UPDATE SET claims = q.claims + 1 RETURNING claims)
	SELECT CASE WHEN n IS NULL THEN false WHEN n <= $10 THEN true
		ELSE ('` + quotaMarker + ` ' || n)::int > 0 END
	FROM (SELECT (SELECT claims FROM counted) AS n) c`

// claim decides whether this request runs. The claim commits before the
// handler starts, so the pending row is visible to every concurrent retry
// while the handler works; when claimed, the handler's transaction is
// already open (c.sess).
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

// claimOnce sends, in one round trip: BEGIN, the claim, COMMIT, BEGIN.
// Claimed: the second transaction is the handler's. Not claimed: the key
// is live, and decideLive reads it in the second transaction.
func (s *Store) claimOnce(ctx context.Context, sc scope, fp [32]byte) (c claim, retry bool, err error) {
	now := s.now()
	owner := newOwner()
	sql, args := claimSQL, []any{sc.tenant, sc.operation, sc.key, fp[:], owner, now.Add(s.lease), now, now.Add(s.ttl)}
	if s.quota > 0 {
		sql, args = claimQuotaSQL, append(args, now.Truncate(time.Minute), s.quota)
	}
	var got bool
	sess, err := openSession(ctx, s.pool, func(b *pgx.Batch) {
		b.Queue(sql, args...)
		b.Queue("commit")
		b.Queue("begin")
	}, func(br pgx.BatchResults) error {
		if err := br.QueryRow().Scan(&got); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return execAll(2)(br)
	})
	switch {
	case raised(err, quotaMarker):
		return claim{outcome: rateLimited, until: now.Truncate(time.Minute).Add(time.Minute)}, false, nil
	case err != nil:
		return c, false, fmt.Errorf("idempotency: claim key: %w", err)
	case got:
		return claim{outcome: claimed, owner: owner, sess: sess}, false, nil
	}
	c, retry, err = s.decideLive(ctx, sess, sc, fp, now, owner)
	if c.sess == nil {
		sess.rollback(ctx) // a no-op when decideLive ended it
	}
	return c, retry, err
}

// decideLive answers a request whose key is live: replay, 409, 422, or a
// takeover of a pending key whose lease has ended. It locks the row so
// that its state cannot change under the decision.
func (s *Store) decideLive(ctx context.Context, sess *session, sc scope, fp [32]byte, now time.Time, owner [16]byte) (c claim, retry bool, err error) {
	var (
		storedFP   []byte
		state      string
		oldOwner   [16]byte
		lockedTill time.Time
		status     *int32
		headers    map[string][]string
		body       []byte
		sealed     []byte
	)
	err = sess.tx.QueryRow(ctx, `SELECT fingerprint, state, owner, locked_until, status_code, response_headers, response_body, sealed
		FROM idempotency_keys WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3 FOR UPDATE`,
		sc.tenant, sc.operation, sc.key).Scan(&storedFP, &state, &oldOwner, &lockedTill, &status, &headers, &body, &sealed)
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
		// Opened before the replay is counted: a response that does not
		// open is an error, never an answer, and no replay.
		if body, err = s.openBody(sc, body, sealed); err != nil {
			return c, false, fmt.Errorf("%w: %w", errUnreadable, err)
		}
		err := sess.finish(ctx, `UPDATE idempotency_keys SET replays = replays + 1
			WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3`, sc.tenant, sc.operation, sc.key)
		if err != nil {
			return c, false, fmt.Errorf("idempotency: count replay: %w", err)
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
	lease := now.Add(s.lease)
	tag, err := sess.tx.Exec(ctx, `UPDATE idempotency_keys
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
	if err := sess.commitAndBegin(ctx); err != nil {
		return c, false, fmt.Errorf("idempotency: commit takeover: %w", err)
	}
	return claim{outcome: claimed, owner: owner, sess: sess, takeover: true}, false, nil
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
		s.logFailure(ctx, "idempotency: release key", sc.operation, err)
	}
}
