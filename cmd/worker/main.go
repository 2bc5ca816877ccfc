// Command worker runs the bookonce Temporal worker: every workflow
// (conversation, appointment, deposit, lifecycle, reconciler; see
// internal/stack.Register and Worker) with its activities, plus the
// outbox relay and the retention sweep. Run as many as you like; the
// idempotency keys make their retries and re-executions harmless.
package main

import (
	// Times in messages are stated in BOOKONCE_TIMEZONE on any host, with
	// or without system tzdata.
	_ "time/tzdata"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
)

func main() { stack.Command("worker", config.WorkerSecrets, stack.RunWorker) }
