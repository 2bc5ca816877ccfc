// Package telemetry holds the metrics that several bookonce packages share
// and the gauges read from PostgreSQL, so any process with a pool can
// expose the state of work that waits (review cases, unknown outcomes,
// the outbox backlog).
package telemetry

import "github.com/prometheus/client_golang/prometheus"

// DuplicatesBlockedName is the cross-layer counter of blocked duplicates.
const DuplicatesBlockedName = "bookonce_duplicates_blocked_total"

// DuplicatesBlockedHelp is the help text of bookonce_duplicates_blocked_total.
// Every layer that registers the metric on a shared registry must use it
// verbatim, or the registry refuses the second registration.
const DuplicatesBlockedHelp = "Duplicate requests or messages blocked before a second effect, by layer."

// Layers of bookonce_duplicates_blocked_total written through DuplicatesBlocked.
const (
	// LayerOutbox: a message that would have been sent twice (a second
	// reservation, or a re-send avoided by reconciliation).
	LayerOutbox = "outbox"
	// LayerDedup: the same intent arrived again (possibly on another
	// channel) and merged into the booking under way.
	LayerDedup = "dedup"
)

// DuplicatesBlocked is the worker process's bookonce_duplicates_blocked_total
// (layers outbox and dedup). It is process-wide because the outbox store,
// the relay and the activities are built in several places; the worker's
// registry exposes it (activities.Collectors).
var DuplicatesBlocked = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: DuplicatesBlockedName, Help: DuplicatesBlockedHelp,
}, []string{"layer", "tenant", "route"})
