package bench

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/idempotency"
)

// Until package idempotency has Options.PlainTransaction this file is
// excluded by its build tag; once it has, delete the tag line and item 1
// measures the hold handler without the middleware too.
func init() {
	plainStore = func(pool *pgxpool.Pool) *idempotency.Store {
		return idempotency.NewStore(pool, idempotency.Options{PlainTransaction: true})
	}
}
