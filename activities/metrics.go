package activities

import "github.com/prometheus/client_golang/prometheus"

// dedupDecisions counts cross-channel dedup decisions by kind and channel
// pair (e.g. "voice+whatsapp"): the early warning that channels overlap.
var dedupDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "bookonce_dedup_decisions_total",
	Help: "Cross-channel dedup decisions by kind (new, merge, review) and channel pair.",
}, []string{"decision", "channel_pair"})

// Collectors returns the activities' metrics for a worker's registry.
func Collectors() []prometheus.Collector { return []prometheus.Collector{dedupDecisions} }
