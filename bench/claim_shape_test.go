package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// claimShape is the variant of item 2 that splits the gap between the
// floor and the store: the raw pgx statements of the asynchronous floor
// in the store's shape, without the middleware. One connection per op,
// held from the claim to the completion like a request's, and the store's
// two round trips: [BEGIN · INSERT (asynchronous commit) · COMMIT · BEGIN],
// then [UPDATE · COMMIT]. Against the floor it prices the explicit
// transactions (the handler's transaction, which the floor does not
// have); against the store, the middleware's own work.
const claimShape = "raw pgx in the store's shape: [BEGIN · INSERT · COMMIT · BEGIN] [UPDATE · COMMIT]"

func shapedClaim(pool *pgxpool.Pool, prefix string) Op {
	return func(ctx context.Context, seq int) error {
		key := prefix + strconv.Itoa(seq)
		fp := sha256.Sum256([]byte(key))
		now := time.Now().UTC()
		owner := fmt.Sprintf("00000000-0000-4000-8000-%012d", seq)
		pc, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer pc.Release()
		var claim pgx.Batch
		claim.Queue("begin")
		claim.Queue(rawInsert+` RETURNING set_config('synchronous_commit', 'off', true)`,
			tenant, noopOp, key, fp[:], owner, now.Add(30*time.Second), now, now.Add(72*time.Hour))
		claim.Queue("commit")
		claim.Queue("begin")
		if err := pc.SendBatch(ctx, &claim).Close(); err != nil {
			return fmt.Errorf("shaped claim %s: %w", key, err)
		}
		var done pgx.Batch
		done.Queue(rawComplete, tenant, noopOp, key, owner, now)
		done.Queue("commit")
		if err := pc.SendBatch(ctx, &done).Close(); err != nil {
			return fmt.Errorf("shaped complete %s: %w", key, err)
		}
		return nil
	}
}
