package activities

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/internal/telemetry"
)

// dedupDecisions counts cross-channel dedup decisions by kind and channel
// pair (e.g. "voice+whatsapp"): the early warning that channels overlap.
var dedupDecisions = decisionCounter{prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "bookonce_dedup_decisions_total",
	Help: "Cross-channel dedup decisions by kind (new, merge, review) and channel pair.",
}, []string{"decision", "channel_pair"})}

// decisionCounter is dedupDecisions. A merge is also a duplicate blocked at
// the dedup layer (the same wish arrived again and joined the booking under
// way), so it counts in bookonce_duplicates_blocked_total{layer="dedup",
// route=<channel pair>} as well. The decision is counted where the tenant
// is not at hand, so those series carry tenant="", which the ops page
// counts for every tenant.
type decisionCounter struct{ vec *prometheus.CounterVec }

// WithLabelValues returns the counter of one decision kind and channel pair.
func (c decisionCounter) WithLabelValues(kind, pair string) interface{ Inc() } {
	decided := c.vec.WithLabelValues(kind, pair)
	if dedup.Kind(kind) != dedup.Merge {
		return decided
	}
	return counters{decided, telemetry.DuplicatesBlocked.WithLabelValues(telemetry.LayerDedup, "", pair)}
}

// counters increments several counters as one.
type counters []prometheus.Counter

// Inc increments every counter.
func (cs counters) Inc() {
	for _, c := range cs {
		c.Inc()
	}
}

// Collectors returns the activities' metrics for a worker's registry:
// the dedup decisions and the duplicates blocked at the dedup and outbox
// layers (the outbox reservations happen in activities too).
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{dedupDecisions.vec, telemetry.DuplicatesBlocked}
}
