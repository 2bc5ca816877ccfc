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

// reconcilerRepairs counts what the reconciler undid (or handed to a
// person) because a saga ended without settling it: each is an effect that
// would otherwise have leaked.
var reconcilerRepairs = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "bookonce_reconciler_repairs_total",
	Help: "Orphaned effects the reconciler repaired, by kind (release_hold, void_authorisation, cancel_booking, review).",
}, []string{"kind"})

// ReconcilerRepairs returns the counter of one repair kind (for tests and
// the drill's report).
func ReconcilerRepairs(kind string) prometheus.Counter {
	return reconcilerRepairs.WithLabelValues(kind)
}

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
// layers (the outbox reservations happen in activities too), the
// reconciler's repairs, and where bookings' time goes
// (bookonce_booking_phase_seconds: the workflows and the outbox relay of
// the worker process observe it).
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{dedupDecisions, telemetry.DuplicatesBlocked, reconcilerRepairs, telemetry.BookingPhases}
}
