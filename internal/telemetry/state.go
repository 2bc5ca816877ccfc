package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// Reasons of review cases that count as unknown outcomes (review.Reason
// values; repeated here so telemetry does not depend on the domain).
const reasonUnknownOutcome = "unknown_outcome"

// Sources of bookonce_unknown_outcomes_open.
const (
	// SourceReviewCase: a saga step whose outcome stayed unknown after
	// reconciliation waits for a person (review case, reason unknown_outcome).
	SourceReviewCase = "review_case"
	// SourceOutbox: a message attempted with an unknown outcome and not found
	// at the provider waits for a person (outbox row in state review).
	SourceOutbox = "outbox"
)

// DefaultStateTimeout bounds the queries of one scrape: a slow database
// must not hold up /metrics (Prometheus times out at 10s by default).
const DefaultStateTimeout = 2 * time.Second

var (
	reviewOpenDesc = prometheus.NewDesc("bookonce_review_cases_open",
		"Review cases waiting for a person, by tenant and reason.", []string{"tenant", "reason"}, nil)
	unknownDesc = prometheus.NewDesc("bookonce_unknown_outcomes_open",
		"Outcomes nobody knows (saga steps, messages) waiting for a person, by tenant and source.", []string{"tenant", "source"}, nil)
	pendingDesc = prometheus.NewDesc("bookonce_outbox_pending_messages",
		"Outbox messages reserved and not yet sent (including attempted ones awaiting reconciliation), by tenant.", []string{"tenant"}, nil)
	pendingAgeDesc = prometheus.NewDesc("bookonce_outbox_oldest_pending_age_seconds",
		"Age of the oldest pending outbox message, by tenant: a growing value means messages do not leave.", []string{"tenant"}, nil)
	stateUpDesc = prometheus.NewDesc("bookonce_state_up",
		"1 when the last scrape could read the review and outbox state from PostgreSQL, 0 when it could not.", nil, nil)
)

// stateQuery reads every gauge in one round trip: (kind, tenant, label, value).
// Each part is served by a partial index (review_cases_open,
// outbox_messages_pending) except the outbox review count, whose rows are few.
const stateQuery = `
SELECT 'review', tenant_id, reason, count(*)::float8 FROM review_cases WHERE status = 'open' GROUP BY tenant_id, reason
UNION ALL
SELECT 'outbox_review', tenant_id, '', count(*)::float8 FROM outbox_messages WHERE state = 'review' GROUP BY tenant_id
UNION ALL
SELECT 'outbox_pending', tenant_id, '', count(*)::float8 FROM outbox_messages WHERE state = 'pending' GROUP BY tenant_id
UNION ALL
SELECT 'outbox_age', tenant_id, '', greatest(extract(epoch FROM now() - min(created_at)), 0)::float8
	FROM outbox_messages WHERE state = 'pending' GROUP BY tenant_id`

// State is a prometheus.Collector of the gauges PostgreSQL knows: open
// review cases by reason, unknown outcomes, and the outbox backlog. It
// queries on every scrape, so each process with a pool (gateway, worker)
// can expose it and the values are never stale; aggregate with max(), not
// sum(), across processes. A failed query sets bookonce_state_up to 0
// instead of failing the whole scrape.
type State struct {
	Pool *pgxpool.Pool
	// Timeout bounds one scrape's queries; zero means DefaultStateTimeout.
	Timeout time.Duration
	// Log receives a warning when reading the state starts failing; nil:
	// slog.Default().
	Log *slog.Logger

	failing atomic.Bool
}

// Describe sends the descriptors of every gauge.
func (s *State) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{reviewOpenDesc, unknownDesc, pendingDesc, pendingAgeDesc, stateUpDesc} {
		ch <- d
	}
}

// Collect reads the state and sends the gauges.
func (s *State) Collect(ch chan<- prometheus.Metric) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultStateTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	metrics, err := s.read(ctx)
	if err != nil {
		if !s.failing.Swap(true) { // once per outage, not once per scrape
			s.log().Warn("metrics: reading review and outbox state failed", "err", err)
		}
		ch <- prometheus.MustNewConstMetric(stateUpDesc, prometheus.GaugeValue, 0)
		return
	}
	if s.failing.Swap(false) {
		s.log().Info("metrics: reading review and outbox state works again")
	}
	for _, m := range metrics {
		ch <- m
	}
	ch <- prometheus.MustNewConstMetric(stateUpDesc, prometheus.GaugeValue, 1)
}

// read runs the query and turns its rows into gauges; nothing is sent
// before every row is read, so a failure mid-way sends no partial state.
func (s *State) read(ctx context.Context) ([]prometheus.Metric, error) {
	rows, err := s.Pool.Query(ctx, stateQuery)
	if err != nil {
		return nil, fmt.Errorf("query review and outbox state: %w", err)
	}
	defer rows.Close()
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	for rows.Next() {
		var kind, tenant, label string
		var v float64
		if err := rows.Scan(&kind, &tenant, &label, &v); err != nil {
			return nil, fmt.Errorf("scan review and outbox state: %w", err)
		}
		switch kind {
		case "review":
			gauge(reviewOpenDesc, v, tenant, label)
			if label == reasonUnknownOutcome {
				gauge(unknownDesc, v, tenant, SourceReviewCase)
			}
		case "outbox_review":
			gauge(unknownDesc, v, tenant, SourceOutbox)
		case "outbox_pending":
			gauge(pendingDesc, v, tenant)
		case "outbox_age":
			gauge(pendingAgeDesc, v, tenant)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read review and outbox state: %w", err)
	}
	return out, nil
}

func (s *State) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
