package activities

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/internal/telemetry"
)

// dedupDecisions counts cross-channel dedup decisions by kind and channel
// pair (e.g. "voice+whatsapp"): the early warning that channels overlap.
var dedupDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "bookonce_dedup_decisions_total",
	Help: "Cross-channel dedup decisions by kind (new, merge, review) and channel pair.",
}, []string{"decision", "channel_pair"})

// countDecision counts a decision; a merge is also a duplicate blocked at
// the dedup layer (the same wish arrived again and joined the booking
// under way), per tenant and channel pair.
func countDecision(tenant string, d dedup.Decision) {
	dedupDecisions.WithLabelValues(string(d.Kind), d.ChannelPair).Inc()
	if d.Kind == dedup.Merge {
		telemetry.DuplicatesBlocked.WithLabelValues(telemetry.LayerDedup, tenant, d.ChannelPair).Inc()
	}
}

// Collectors returns the activities' metrics for a worker's registry:
// the dedup decisions and the duplicates blocked at the dedup and outbox
// layers (the outbox reservations happen in activities too).
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{dedupDecisions, telemetry.DuplicatesBlocked}
}
