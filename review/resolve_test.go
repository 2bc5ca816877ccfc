package review_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/review"
)

// signaler records the signals a Resolver sends; fail makes them fail.
type signaler struct {
	fail error
	sent []review.Decision
}

func (s *signaler) SignalWorkflow(_ context.Context, workflowID, _, name string, arg any) error {
	if name != review.SignalDecision {
		return errors.New("unexpected signal " + name + " to " + workflowID)
	}
	s.sent = append(s.sent, arg.(review.Decision))
	return s.fail
}

func openCase(t *testing.T, store *review.Store, key, tenant string, reason review.Reason) review.Case {
	t.Helper()
	c, err := store.Open(context.Background(), key, review.Case{Tenant: tenant, WorkflowID: "appointment:" + tenant + ":" + key, Reason: reason})
	require.NoError(t, err)
	return c
}

func status(t *testing.T, pool *pgxpool.Pool, id string) (string, string) {
	t.Helper()
	var st, res string
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT status, coalesce(resolution, '') FROM review_cases WHERE id = $1`, id).Scan(&st, &res))
	return st, res
}

// TestResolver: the one path of a decision, as the API and the ops page
// take it. Each row asserts the error, the recorded row and the signals.
func TestResolver(t *testing.T) {
	pool := testsupport.Database(t)
	store := &review.Store{Pool: pool}
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		reason     review.Reason
		tenant     string // who resolves; the case is tenant t1's
		action     review.Action
		before     review.Action // resolved with this first, if set
		signalErr  error
		wantErr    error
		wantStatus string
		wantSent   int
	}{
		{name: "duplicate separated", reason: review.ReasonPotentialDuplicate, tenant: "t1", action: review.ActionSeparate, wantStatus: "resolved", wantSent: 1},
		{name: "unknown outcome retried", reason: review.ReasonUnknownOutcome, tenant: "t1", action: review.ActionRetry, wantStatus: "resolved", wantSent: 1},
		{name: "unknown action", reason: review.ReasonPotentialDuplicate, tenant: "t1", action: "delete", wantErr: review.ErrUnknownAction, wantStatus: "open"},
		{name: "action does not fit the reason", reason: review.ReasonPotentialDuplicate, tenant: "t1", action: review.ActionRetry, wantErr: review.ErrActionDoesNotFit, wantStatus: "open"},
		{name: "another tenant's case", reason: review.ReasonPotentialDuplicate, tenant: "t2", action: review.ActionMerge, wantErr: review.ErrNotFound, wantStatus: "open"},
		{name: "double click signals again", reason: review.ReasonPotentialDuplicate, tenant: "t1", action: review.ActionMerge, before: review.ActionMerge, wantStatus: "resolved", wantSent: 2},
		{name: "another action conflicts", reason: review.ReasonPotentialDuplicate, tenant: "t1", action: review.ActionMerge, before: review.ActionSeparate, wantErr: review.ErrAlreadyResolved, wantStatus: "resolved", wantSent: 1},
		{name: "orphaned effect: recorded, nobody waits", reason: review.ReasonOrphanedEffect, tenant: "t1", action: review.ActionProceed, wantStatus: "resolved"},
		{name: "workflow unreachable: the case stays open to be resolved again", reason: review.ReasonCompensationFailed, tenant: "t1", action: review.ActionAbandon, signalErr: errors.New("unavailable"), wantStatus: "open", wantSent: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig := &signaler{}
			r := &review.Resolver{Store: store, Temporal: sig}
			c := openCase(t, store, t.Name(), "t1", tc.reason)
			if tc.before != "" {
				_, err := r.Resolve(ctx, "t1", c.ID, tc.before)
				require.NoError(t, err)
			}
			sig.fail = tc.signalErr
			_, err := r.Resolve(ctx, tc.tenant, c.ID, tc.action)
			switch {
			case tc.signalErr != nil:
				var se *review.SignalError
				require.ErrorAs(t, err, &se)
			case tc.wantErr != nil:
				require.ErrorIs(t, err, tc.wantErr)
			default:
				require.NoError(t, err)
			}
			st, res := status(t, pool, c.ID)
			require.Equal(t, tc.wantStatus, st)
			if st == "resolved" && tc.before == "" {
				require.Equal(t, string(tc.action), res)
			}
			require.Len(t, sig.sent, tc.wantSent)
			for _, d := range sig.sent {
				require.Equal(t, c.ID, d.CaseID)
			}
		})
	}
}

// TestActionsFor: every reason's actions are known actions.
func TestActionsFor(t *testing.T) {
	for _, reason := range []review.Reason{review.ReasonUnknownOutcome, review.ReasonPotentialDuplicate,
		review.ReasonCompensationFailed, review.ReasonOrphanedEffect, review.ReasonCancellationRequest} {
		require.Subset(t, review.Actions(), review.ActionsFor(reason), reason)
	}
}
