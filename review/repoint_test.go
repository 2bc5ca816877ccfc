package review_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/review"
)

// TestRepointMovesOnlyTheTenantsOpenCases: a conversation moved from its
// legacy ID takes its open cases along; resolved cases keep the ID they
// were decided for, and another tenant's cases are untouched.
func TestRepointMovesOnlyTheTenantsOpenCases(t *testing.T) {
	pool := testsupport.Database(t)
	store := &review.Store{Pool: pool}
	ctx := context.Background()
	const legacy, keyed = "customer:t1:+4915112345678", "customer:t1:abcdefghijklmnopqrstuvwxyz"
	open := func(key, tenant string) review.Case {
		c, err := store.Open(ctx, key, review.Case{Tenant: tenant, WorkflowID: legacy, Reason: review.ReasonPotentialDuplicate})
		require.NoError(t, err)
		return c
	}
	pending, decided, foreign := open("k-open", "t1"), open("k-resolved", "t1"), open("k-other", "t2")
	_, err := store.Resolve(ctx, decided.ID, review.ActionMerge)
	require.NoError(t, err)

	n, err := store.Repoint(ctx, "t1", legacy, keyed)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	for _, c := range []struct {
		id, want string
	}{{pending.ID, keyed}, {decided.ID, legacy}, {foreign.ID, legacy}} {
		got, err := store.Get(ctx, c.id)
		require.NoError(t, err)
		require.Equal(t, c.want, got.WorkflowID, c.id)
	}
	n, err = store.Repoint(ctx, "t1", legacy, keyed)
	require.NoError(t, err)
	require.Zero(t, n, "a repeat (an activity retry) moves nothing more")
}
