package idempotency_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
)

func TestReaperAndExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, idempotency.Options{TTL: 2 * time.Hour})
	ctx := context.Background()
	old := make(map[string]response)
	for i := range 5 {
		k := fmt.Sprintf("old-%d", i)
		old[k] = e.post(k, demoRequest{Customer: k})
		require.Equal(t, http.StatusCreated, old[k].status)
	}
	e.clock.Advance(time.Hour)
	for _, k := range []string{"young-0", "young-1"} {
		require.Equal(t, http.StatusCreated, e.post(k, demoRequest{Customer: k}).status)
	}

	e.clock.Advance(time.Hour) // the old keys expire exactly now
	n, err := e.store.Reap(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, 2, n, "at most one batch")
	total := n
	for n > 0 {
		n, err = e.store.Reap(ctx, 2)
		require.NoError(t, err)
		require.LessOrEqual(t, n, 2)
		total += n
	}
	require.Equal(t, 5, total)
	require.Equal(t, 2, e.keyRows(), "live keys are kept")
	require.InDelta(t, 5, testutil.ToFloat64(e.store.Metrics().ExpiredDeleted), 0)

	t.Run("reuse after expiry runs anew", func(t *testing.T) {
		r := e.post("old-0", demoRequest{Customer: "old-0"})
		require.Equal(t, http.StatusCreated, r.status)
		require.False(t, r.replayed)
		require.NotEqual(t, old["old-0"].body, r.body)
		require.Equal(t, 2, e.effects("old-0"))
	})

	t.Run("expired but not reaped is new, even with another payload", func(t *testing.T) {
		e.clock.Advance(time.Hour) // young keys expire; no reaping
		_, err := e.store.Lookup(ctx, "tenant-a", opCreate, "young-0")
		require.ErrorIs(t, err, idempotency.ErrNotFound, "an expired key is not reported")
		r := e.post("young-0", demoRequest{Customer: "young-0-other"})
		require.Equal(t, http.StatusCreated, r.status, "body %s", r.body)
		require.False(t, r.replayed)
		rec, err := e.store.Lookup(ctx, "tenant-a", opCreate, "young-0")
		require.NoError(t, err)
		require.Equal(t, e.clock.Now().Add(2*time.Hour), rec.ExpiresAt.UTC(), "a fresh retention")
		require.Equal(t, 0, rec.Replays)
	})

	t.Run("RunReaper drains until cancelled", func(t *testing.T) {
		e.clock.Advance(3 * time.Hour)
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { e.store.RunReaper(rctx, time.Hour); close(done) }()
		require.Eventually(t, func() bool { return e.keyRows() == 0 }, 10*time.Second, 5*time.Millisecond)
		cancel()
		<-done
	})
}
