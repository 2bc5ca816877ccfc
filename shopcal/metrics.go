package shopcal

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/outcome"
)

// Metric names of the mirror (the ops page and alerts read them).
const (
	MetricSyncs    = "bookonce_shop_calendar_syncs_total"
	MetricLastSync = "bookonce_shop_calendar_last_sync_timestamp_seconds"
	MetricFailing  = "bookonce_shop_calendar_failing"
	MetricPush     = "bookonce_shop_calendar_push_expiry_timestamp_seconds"
)

var (
	syncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricSyncs,
		Help: "Reads of shops' calendars into bookonce's blocks, by tenant and result (ok, retryable, unknown, final).",
	}, []string{"tenant", "result"})
	lastSync = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: MetricLastSync,
		Help: "When a resource's calendar was last read and mirrored whole (Unix seconds); now minus this bounds how late a staff entry blocks the slot.",
	}, []string{"tenant", "resource"})
	failing = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: MetricFailing,
		Help: "1 while a resource's calendar cannot be read (its last read failed), else 0.",
	}, []string{"tenant", "resource"})
	pushUntil = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: MetricPush,
		Help: "When a resource's calendar's push channel expires (Unix seconds; it is renewed before); 0 while it has none and is only polled.",
	}, []string{"tenant", "resource"})
)

// Collectors returns the mirror's metrics for a worker's registry.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{syncs, lastSync, failing, pushUntil}
}

// observe records one refresh of a resource's calendar.
func observe(tenant, resource string, at time.Time, err error) {
	if err == nil {
		syncs.WithLabelValues(tenant, "ok").Inc()
		lastSync.WithLabelValues(tenant, resource).Set(float64(at.Unix()))
		failing.WithLabelValues(tenant, resource).Set(0)
		return
	}
	syncs.WithLabelValues(tenant, outcome.Of(err).String()).Inc()
	failing.WithLabelValues(tenant, resource).Set(1)
}

// observePush records a resource's push channel (zero: none).
func observePush(tenant, resource string, expires time.Time) {
	v := 0.0
	if !expires.IsZero() {
		v = float64(expires.Unix())
	}
	pushUntil.WithLabelValues(tenant, resource).Set(v)
}
