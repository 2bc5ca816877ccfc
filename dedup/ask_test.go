package dedup_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestOneKeyAtOnceGivesOneDecision: several calls with the same key at
// the same moment (an agent's parallel tool calls of one operation) all
// get the one decision taken, none fails on the key's uniqueness. The test
// holds the customer's lock until all of them wait for it, so they really
// meet.
func TestOneKeyAtOnceGivesOneDecision(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	const n = 5
	hold, err := s.Pool.Begin(ctx)
	require.NoError(t, err)
	_, err = hold.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('demo/+4915112345678'))`)
	require.NoError(t, err)
	decisions := make([]dedup.Decision, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			decisions[i], errs[i] = s.Decide(context.Background(), "agent/demo/op/i1", intent("i1", "tire-change", "agent", "agent:op", slot))
		}()
	}
	testsupport.Eventually(t, 10*time.Second, "every call waits for the customer's lock", func() bool {
		var waiting int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting))
		return waiting == n
	})
	require.NoError(t, hold.Rollback(ctx))
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, dedup.Decision{Kind: dedup.New, IntentID: "i1", WorkflowID: "appointment:demo:i1", ChannelPair: "agent"}, decisions[i])
	}
}

// TestAskAnswersACloseIntentWithoutACase: with Ask, a different wish of
// the customer close in time is answered Ask, naming the other intent's
// appointment and slot; no review case is opened and nothing is recorded,
// so the wish may come again, confirmed (Separate), and is then new.
func TestAskAnswersACloseIntentWithoutACase(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	_, err := s.Decide(ctx, "k1", intent("i1", "tire-change", "whatsapp", "ev1", slot))
	require.NoError(t, err)
	second := intent("i2", "tire-change", "agent", "agent:x", slot.Add(2*time.Hour))
	second.Ask = true
	d, err := s.Decide(ctx, "k2", second)
	require.NoError(t, err)
	require.Equal(t, dedup.Ask, d.Kind)
	require.Equal(t, "i1", d.Conflicting)
	require.Equal(t, "appointment:demo:i1", d.ConflictingWorkflow)
	require.Equal(t, "tire-change", d.ConflictingService)
	require.True(t, slot.Equal(d.ConflictingSlot))
	var cases, decided int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM review_cases`).Scan(&cases))
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM dedup_decisions WHERE idempotency_key = 'k2'`).Scan(&decided))
	require.Zero(t, cases)
	require.Zero(t, decided, "nothing recorded under the key")

	second.Separate = true
	d, err = s.Decide(ctx, "k2/second", second)
	require.NoError(t, err)
	require.Equal(t, dedup.New, d.Kind)
}
