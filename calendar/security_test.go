package calendar_test

// Attacks on the calendar API by another tenant (docs/security.md).

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/outcome"
)

// TestForeignReferenceIsRefused: a hold's reference is what the agent
// tools, the reconciler and the sagas follow to a workflow, so the demo
// tenant may use its own namespace or any reference outside bookonce's
// (a front desk's), never another tenant's: such a hold is refused with a
// problem naming the field, and nothing is written. Before, the demo
// tenant could plant "appointment:other:…" and have the agent tools
// cancel the other tenant's booking.
func TestForeignReferenceIsRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, c := range []struct {
		ref string
		ok  bool
	}{
		{"appointment:demo:mine", true},
		{"appointment:demo:mine#move-1", true},
		{"desk-anna-tuesday", true},
		{"appointment:other:theirs", false},
		{"appointment:other:theirs#move-1", false},
		{"booking:appointment:other:theirs", false},
		{"customer:other:k_1", false},
		{"appointment:demo:", false},
	} {
		t.Run(c.ref, func(t *testing.T) {
			before := f.count(t, "true")
			h, err := f.client.CreateHold(ctx, "k-"+c.ref, hold(c.ref))
			if c.ok {
				require.NoError(t, err)
				_, err = f.client.ReleaseHold(ctx, "rel-"+c.ref, h.ID)
				require.NoError(t, err)
				return
			}
			var ce *calendar.Error
			require.ErrorAs(t, err, &ce)
			require.Equal(t, outcome.Final, ce.Outcome)
			require.Equal(t, calendar.CodeInvalidRequest, ce.Code)
			require.Contains(t, ce.Error(), "reference")
			require.Equal(t, before, f.count(t, "true"), "nothing written")
		})
	}
}
