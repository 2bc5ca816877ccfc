package telemetry_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/telemetry"
)

func TestObservePhaseRecordsOnlyAKnownNonNegativeSpan(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		since, end time.Time
		count      uint64
		sum        float64
	}{
		{"a span", at, at.Add(250 * time.Millisecond), 1, 0.25},
		{"no accepted time", time.Time{}, at, 0, 0},
		{"an end before the start (clock skew)", at, at.Add(-time.Millisecond), 0, 0},
		{"an empty span", at, at, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := telemetry.NewBookingPhases()
			telemetry.ObservePhase(h, "demo", telemetry.PhaseHold, tc.since, tc.end)
			m := &dto.Metric{}
			require.NoError(t, h.WithLabelValues(string(telemetry.PhaseHold), "demo").(prometheus.Histogram).Write(m))
			require.Equal(t, tc.count, m.GetHistogram().GetSampleCount())
			require.InDelta(t, tc.sum, m.GetHistogram().GetSampleSum(), 1e-9)
		})
	}
}
