package retention

import "github.com/prometheus/client_golang/prometheus"

// MetricRedacted is the counter of rows the sweep redacted or deleted.
const MetricRedacted = "bookonce_retention_redacted_total"

// Metrics are the sweep's counters; a nil *Metrics counts nothing.
type Metrics struct {
	redacted *prometheus.CounterVec
}

// NewMetrics creates the counters and registers them on reg (if not nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{redacted: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricRedacted,
		Help: "Rows whose personal data the retention sweep redacted (inbox, outbox) or deleted (intents, dedup decisions, superseded consent changes) because they were older than BOOKONCE_RETENTION, by table.",
	}, []string{"table"})}
	for _, t := range []Table{TableInbox, TableOutbox, TableIntents, TableDecisions, TableConsent, TableRelay} {
		m.redacted.WithLabelValues(string(t)) // every table shows, at 0 too
	}
	if reg != nil {
		reg.MustRegister(m.redacted)
	}
	return m
}

// Redacted is the counter of one table (for tests).
func (m *Metrics) Redacted(t Table) prometheus.Counter {
	return m.redacted.WithLabelValues(string(t))
}

func (m *Metrics) add(t Table, n int) {
	if m != nil && n > 0 {
		m.redacted.WithLabelValues(string(t)).Add(float64(n))
	}
}
