package shopcal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	bookonce "github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/shopcal"
)

// refusing is a calendar whose every call fails with err.
type refusing struct {
	shopcal.Provider
	err error
}

func (r refusing) Busy(context.Context, time.Time, time.Time, *time.Location) ([]shopcal.Interval, error) {
	return nil, r.err
}

// TestMirrorSaysWhenACalendarRefuses: a calendar that refuses for good is
// not silence: every sweep tells Unreachable (which opens the case) and
// the resource shows as failing in /metrics; a calendar that only timed
// out is retried at the next sweep without a case; once it reads again
// it is no longer failing and its last sync is recorded.
func TestMirrorSaysWhenACalendarRefuses(t *testing.T) {
	final := &shopcal.Error{Op: "busy", Status: 401, Outcome: outcome.Final, Err: errors.New("invalid_grant")}
	timeout := &shopcal.Error{Op: "busy", Outcome: outcome.Unknown, Err: context.DeadlineExceeded}
	provider := shopcal.Provider(refusing{err: final})
	var told []string
	stored := 0
	at := time.Date(2030, 3, 1, 8, 0, 0, 0, time.UTC)
	m := &shopcal.Mirror{
		Calendars: func(string, string) (shopcal.Provider, bool, error) { return provider, true, nil },
		Tenants:   func() []string { return []string{"mirror-test"} },
		Resources: func(string) []string { return []string{"bay-1"} },
		Blocks: func(context.Context, string, string, bookonce.BlocksRequest) (bookonce.BlocksResult, error) {
			stored++
			return bookonce.BlocksResult{}, nil
		},
		Conflict: func(context.Context, string, bookonce.Conflict) error { return nil },
		Unreachable: func(_ context.Context, tenant, resource string, err error) error {
			told = append(told, tenant+"/"+resource)
			return nil
		},
		Now: func() time.Time { return at },
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(shopcal.Collectors()...)
	metric := func(name string) float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			for _, mm := range mf.GetMetric() {
				labels := map[string]string{}
				for _, l := range mm.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if mf.GetName() == name && labels["tenant"] == "mirror-test" && (labels["resource"] == "bay-1" || labels["result"] == "final") {
					return mm.GetGauge().GetValue() + mm.GetCounter().GetValue()
				}
			}
		}
		return -1
	}

	for range 2 {
		require.ErrorIs(t, m.Sweep(context.Background()), final)
	}
	require.Equal(t, []string{"mirror-test/bay-1", "mirror-test/bay-1"}, told, "each sweep says it (the case opens once a day)")
	require.Equal(t, 1.0, metric(shopcal.MetricFailing))
	require.Equal(t, 2.0, metric(shopcal.MetricSyncs))
	require.Zero(t, stored, "a calendar that cannot be read changes no blocks")

	provider = refusing{err: timeout}
	require.Error(t, m.Sweep(context.Background()))
	require.Len(t, told, 2, "a timeout is no case: the next sweep tries again")

	provider = refusing{err: nil}
	require.NoError(t, m.Sweep(context.Background()))
	require.Equal(t, 1, stored)
	require.Equal(t, 0.0, metric(shopcal.MetricFailing))
	require.Equal(t, float64(at.Unix()), metric(shopcal.MetricLastSync))
}

// flaky fails its first read as a connection the server closed would.
type flaky struct {
	shopcal.Provider
	reads *int
}

func (f flaky) Busy(context.Context, time.Time, time.Time, *time.Location) ([]shopcal.Interval, error) {
	if *f.reads++; *f.reads == 1 {
		return nil, &shopcal.Error{Op: "busy", Outcome: outcome.Unknown, Err: errors.New("read: connection reset by peer")}
	}
	return nil, nil
}

// TestMirrorReadsAgainAfterAStaleConnection: a sweep's read that meets a
// connection the server just closed is repeated at once, so the sweep
// still mirrors the calendar instead of waiting a poll interval.
func TestMirrorReadsAgainAfterAStaleConnection(t *testing.T) {
	reads, stored := 0, 0
	m := &shopcal.Mirror{
		Calendars: func(string, string) (shopcal.Provider, bool, error) { return flaky{reads: &reads}, true, nil },
		Tenants:   func() []string { return []string{"stale-test"} },
		Resources: func(string) []string { return []string{"bay-1"} },
		Blocks: func(context.Context, string, string, bookonce.BlocksRequest) (bookonce.BlocksResult, error) {
			stored++
			return bookonce.BlocksResult{}, nil
		},
	}
	require.NoError(t, m.Sweep(context.Background()))
	require.Equal(t, 2, reads)
	require.Equal(t, 1, stored)
}
