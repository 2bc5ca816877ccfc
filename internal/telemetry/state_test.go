package telemetry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// gauges gathers reg and returns every gauge as "name{l1=v1,l2=v2}" -> value.
func gauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err, "a scrape never fails because of the state")
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out[seriesName(mf.GetName(), m)] = m.GetGauge().GetValue()
		}
	}
	return out
}

func seriesName(name string, m *dto.Metric) string {
	var labels []string
	for _, l := range m.GetLabel() {
		labels = append(labels, l.GetName()+"="+l.GetValue())
	}
	return name + "{" + strings.Join(labels, ",") + "}"
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string) {
	t.Helper()
	_, err := pool.Exec(context.Background(), sql)
	require.NoError(t, err)
}

// TestStateGaugesReadPostgreSQL: open review cases by reason, unknown
// outcomes (saga review cases and outbox rows in review) and the outbox
// backlog with the age of its oldest row, per tenant; resolved cases and
// sent messages do not count.
func TestStateGaugesReadPostgreSQL(t *testing.T) {
	pool := testsupport.Database(t)
	exec(t, pool, `INSERT INTO review_cases (id, tenant_id, workflow_id, reason, idempotency_key, status, resolution) VALUES
		('rc_1', 'demo', 'appointment:demo:1', 'unknown_outcome', 'k1', 'open', NULL),
		('rc_2', 'demo', 'appointment:demo:2', 'unknown_outcome', 'k2', 'open', NULL),
		('rc_3', 'demo', 'customer:demo:+4915112345678', 'potential_duplicate', 'k3', 'open', NULL),
		('rc_4', 'demo', 'appointment:demo:4', 'unknown_outcome', 'k4', 'resolved', 'retry'),
		('rc_5', 'other', 'appointment:other:5', 'potential_duplicate', 'k5', 'open', NULL)`)
	exec(t, pool, `INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, idempotency_key, state, created_at) VALUES
		('m1', 'demo', 'r1', 'confirmation', 'whatsapp', '+4915112345678', 'a', 'k1', 'pending', now() - interval '90 seconds'),
		('m2', 'demo', 'r2', 'confirmation', 'whatsapp', '+4915112345678', 'b', 'k2', 'pending', now() - interval '5 seconds'),
		('m3', 'demo', 'r3', 'confirmation', 'whatsapp', '+4915112345678', 'c', 'k3', 'review', now() - interval '1 hour'),
		('m4', 'demo', 'r4', 'confirmation', 'whatsapp', '+4915112345678', 'd', 'k4', 'sent', now() - interval '2 hours')`)
	reg := prometheus.NewRegistry()
	reg.MustRegister(&telemetry.State{Pool: pool})
	got := gauges(t, reg)

	for series, want := range map[string]float64{
		"bookonce_state_up{}": 1,
		"bookonce_review_cases_open{reason=unknown_outcome,tenant=demo}":      2,
		"bookonce_review_cases_open{reason=potential_duplicate,tenant=demo}":  1,
		"bookonce_review_cases_open{reason=potential_duplicate,tenant=other}": 1,
		"bookonce_unknown_outcomes_open{source=review_case,tenant=demo}":      2,
		"bookonce_unknown_outcomes_open{source=outbox,tenant=demo}":           1,
		"bookonce_outbox_pending_messages{tenant=demo}":                       2,
	} {
		require.Contains(t, got, series)
		require.Equal(t, want, got[series], series)
	}
	age := got["bookonce_outbox_oldest_pending_age_seconds{tenant=demo}"]
	require.GreaterOrEqual(t, age, 90.0, "the oldest pending row, not the newest")
	require.Less(t, age, 3600.0, "rows in review or sent are not pending")
	require.NotContains(t, got, "bookonce_unknown_outcomes_open{source=review_case,tenant=other}")
	require.NotContains(t, got, "bookonce_outbox_pending_messages{tenant=other}")
}

// TestStateWithoutDatabaseStillScrapes: when PostgreSQL does not answer,
// /metrics still works and says so with bookonce_state_up 0.
func TestStateWithoutDatabaseStillScrapes(t *testing.T) {
	pool := testsupport.Database(t)
	pool.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), &telemetry.State{Pool: pool})
	got := gauges(t, reg)
	require.Equal(t, 0.0, got["bookonce_state_up{}"])
	require.NotContains(t, got, "bookonce_outbox_pending_messages{tenant=demo}")
}
