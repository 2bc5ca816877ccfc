package review_test

// Attacks on the review queue by another tenant (docs/security.md).

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/review"
)

// TestDecisionReachesOnlyTheTenantsOwnWorkflow: a case row of tenant t1
// that names a workflow in t2's namespace (no workflow opens one so; the
// row is data, and data can be planted) is recorded when t1 resolves it,
// and no decision is signalled to t2's workflow. A case on t1's own
// workflow is signalled as always.
func TestDecisionReachesOnlyTheTenantsOwnWorkflow(t *testing.T) {
	pool := testsupport.Database(t)
	store := &review.Store{Pool: pool}
	ctx := context.Background()
	for _, c := range []struct {
		workflow string
		signals  int
	}{
		{"customer:t1:k_1", 1},
		{"appointment:t2:theirs", 0},
		{"booking:appointment:t2:theirs", 0},
		{"customer:t2:k_1", 0},
	} {
		t.Run(c.workflow, func(t *testing.T) {
			opened, err := store.Open(ctx, t.Name(), review.Case{Tenant: "t1", WorkflowID: c.workflow, Reason: review.ReasonPotentialDuplicate})
			require.NoError(t, err)
			sig := &signaler{}
			r := &review.Resolver{Store: store, Temporal: sig}
			_, err = r.Resolve(ctx, "t1", opened.ID, review.ActionSeparate)
			require.NoError(t, err)
			require.Len(t, sig.sent, c.signals)
			st, res := status(t, pool, opened.ID)
			require.Equal(t, "resolved", st)
			require.Equal(t, string(review.ActionSeparate), res)
		})
	}
}
