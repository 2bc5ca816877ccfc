package activities

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/internal/telemetry"
)

// TestMergeCountsAsDuplicateBlocked: every decision is counted by kind and
// channel pair; only a merge is also a duplicate blocked at the dedup layer.
func TestMergeCountsAsDuplicateBlocked(t *testing.T) {
	const pair = "sms+metrics-test" // its own series: the counters are process-wide
	blocked := func() float64 {
		return testutil.ToFloat64(telemetry.DuplicatesBlocked.WithLabelValues(telemetry.LayerDedup, "t-metrics", pair))
	}
	for _, tc := range []struct {
		kind        dedup.Kind
		wantBlocked float64
	}{
		{dedup.New, 0},
		{dedup.Review, 0},
		{dedup.Merge, 1},
		{dedup.Merge, 2},
	} {
		before := testutil.ToFloat64(dedupDecisions.WithLabelValues(string(tc.kind), pair))
		countDecision("t-metrics", dedup.Decision{Kind: tc.kind, ChannelPair: pair})
		require.Equal(t, before+1, testutil.ToFloat64(dedupDecisions.WithLabelValues(string(tc.kind), pair)), tc.kind)
		require.Equal(t, tc.wantBlocked, blocked(), tc.kind)
	}
	reg := prometheus.NewRegistry()
	for _, c := range Collectors() {
		require.NoError(t, reg.Register(c), "the worker registry takes every collector")
	}
}
