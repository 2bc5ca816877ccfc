package bench

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/idempotency"
)

// The baseline of item 1: the hold handler in a plain transaction.
func init() {
	plainStore = func(pool *pgxpool.Pool) *idempotency.Store {
		return idempotency.NewStore(pool, idempotency.Options{PlainTransaction: true})
	}
}
