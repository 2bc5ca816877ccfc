package idempotency

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/internal/telemetry"
)

// Metrics are the Prometheus collectors of a Store. Duplicates that the
// store blocks are the early warning that some layer redelivers more than
// expected (design rule 12), so every blocked duplicate is counted twice:
// by its own kind and in the cross-layer bookonce_duplicates_blocked_total.
type Metrics struct {
	// Claims counts keys claimed for a first run (new, reclaimed after
	// expiry, or taken over after a lease expired).
	Claims *prometheus.CounterVec
	// Replays counts stored responses replayed.
	Replays *prometheus.CounterVec
	// InFlight counts 409 answers for a key whose first request still runs.
	InFlight *prometheus.CounterVec
	// PayloadMismatch counts answers to a key reused with another payload
	// (422; 400 in Stripe's style).
	PayloadMismatch *prometheus.CounterVec
	// LeaseTakeovers counts pending keys taken over after their lease ended
	// (a holder crashed or was too slow).
	LeaseTakeovers *prometheus.CounterVec
	// ExpiredDeleted counts keys removed by the reaper.
	ExpiredDeleted prometheus.Counter
	// ClaimSeconds observes how long the claim transaction took.
	ClaimSeconds *prometheus.HistogramVec
	// DuplicatesBlocked is shared with the other dedup layers (inbox,
	// outbox, activities); this package writes layer="idempotency".
	DuplicatesBlocked *prometheus.CounterVec
}

// DuplicatesBlockedHelp is the help text of bookonce_duplicates_blocked_total.
// Every layer that registers the metric must use it verbatim, or the
// registry refuses the second registration; telemetry keeps the one text.
const DuplicatesBlockedHelp = telemetry.DuplicatesBlockedHelp

// NewMetrics creates the collectors and registers them on reg when reg is
// not nil. A collector that is already registered (a second Store in the
// process, or another layer's bookonce_duplicates_blocked_total) is reused,
// so both write to the same series.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	tl := []string{"tenant", "operation"}
	m := &Metrics{
		Claims: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_idempotency_claims_total", Help: "Idempotency keys claimed for a first run.",
		}, tl),
		Replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_idempotency_replays_total", Help: "Stored responses replayed for a repeated idempotency key.",
		}, tl),
		InFlight: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_idempotency_in_flight_total", Help: "Requests answered 409 because the key's first request is still running.",
		}, tl),
		PayloadMismatch: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_idempotency_payload_mismatch_total", Help: "Requests refused (422, or 400 in Stripe's style) because the key was used with another payload.",
		}, tl),
		LeaseTakeovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_idempotency_lease_takeovers_total", Help: "Pending keys taken over after their lease expired.",
		}, tl),
		ExpiredDeleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bookonce_idempotency_expired_deleted_total", Help: "Expired idempotency keys deleted by the reaper.",
		}),
		ClaimSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "bookonce_idempotency_claim_seconds", Help: "Duration of the idempotency claim transaction.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"operation"}),
		DuplicatesBlocked: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: telemetry.DuplicatesBlockedName, Help: DuplicatesBlockedHelp,
		}, []string{"layer", "tenant", "route"}),
	}
	if reg == nil {
		return m
	}
	m.Claims = register(reg, m.Claims)
	m.Replays = register(reg, m.Replays)
	m.InFlight = register(reg, m.InFlight)
	m.PayloadMismatch = register(reg, m.PayloadMismatch)
	m.LeaseTakeovers = register(reg, m.LeaseTakeovers)
	m.ExpiredDeleted = register(reg, m.ExpiredDeleted)
	m.ClaimSeconds = register(reg, m.ClaimSeconds)
	m.DuplicatesBlocked = register(reg, m.DuplicatesBlocked)
	return m
}

// register registers c or returns the equal collector registered before.
// Any other failure is a programming error (a name clash with different
// labels or help) and panics at start-up, like MustRegister.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic("idempotency: register metrics: " + err.Error())
}

// blocked counts a duplicate stopped by this layer.
func (m *Metrics) blocked(tenant, operation string) {
	m.DuplicatesBlocked.WithLabelValues("idempotency", tenant, operation).Inc()
}
