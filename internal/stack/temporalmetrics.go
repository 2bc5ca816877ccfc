package stack

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// DialOption changes how Dial connects.
type DialOption func(*client.Options, *slog.Logger) error

// WithMetrics exports the Temporal SDK's metrics (requests, polls, task
// latencies, workflows completed and failed) on reg, next to the service's
// own metrics. Register at most one client per registry.
func WithMetrics(reg prometheus.Registerer) DialOption {
	return func(o *client.Options, log *slog.Logger) error {
		h, err := TemporalMetrics(reg, log)
		if err != nil {
			return err
		}
		o.MetricsHandler = h
		return nil
	}
}

// temporalRegistries are the registries TemporalMetrics exports to.
var temporalRegistries sync.Map

// temporalSecondsBuckets suit the SDK's timers (request and task latencies
// from milliseconds, workflow end-to-end latencies up to hours); the
// OpenTelemetry default buckets assume milliseconds.
var temporalSecondsBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600}

// TemporalMetrics is a Temporal MetricsHandler whose instruments an
// OpenTelemetry MeterProvider exports to reg through the Prometheus
// exporter, so the SDK metrics appear on the service's /metrics (names as
// the SDK documents them, e.g. temporal_request_total,
// temporal_workflow_completed_total, temporal_workflow_task_execution_latency_seconds).
func TemporalMetrics(reg prometheus.Registerer, log *slog.Logger) (client.MetricsHandler, error) {
	// The exporter's collector is unchecked (it describes nothing), so the
	// registry would accept a second one, and every scrape would then fail
	// on the duplicate series.
	if _, taken := temporalRegistries.LoadOrStore(reg, true); taken {
		return nil, errors.New("temporal metrics: this registry already exports a Temporal client's metrics")
	}
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, fmt.Errorf("temporal metrics: prometheus exporter: %w", err)
	}
	seconds := sdkmetric.NewView(
		sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Unit: "s"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: temporalSecondsBuckets}},
	)
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter), sdkmetric.WithView(seconds))
	return temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter: provider.Meter("temporal-sdk-go"),
		// Counters are monotonic, so Prometheus sees counters (_total), not gauges.
		UseMonotonicCounters: true,
		// The default panics; a metric must never stop a worker.
		OnError: func(err error) { log.Warn("temporal metrics", "err", err) },
	}), nil
}
