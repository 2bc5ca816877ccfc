// Package postgres finds or starts the PostgreSQL server bookonce keeps its
// state in, opens the pgx pool and applies the embedded schema migrations.
//
// PostgreSQL is the source of truth for idempotency keys, the webhook inbox,
// the outbox, dedup decisions, the calendar and payments, so every bookonce
// process starts here.
package postgres
