package nextslot_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/cmd/internal/nextslot"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestFind asks the real calendar API (on loopback, real PostgreSQL) for
// the next slot, and proves it bookable by booking it.
func TestFind(t *testing.T) {
	cfg := testsupport.Config(t)
	pool := testsupport.Database(t)
	cal := calendar.NewClient(stacktest.CalendarAPI(t, cfg, pool).URL, config.DefaultAPIToken)
	ctx := context.Background()
	now := time.Now()
	const customer, other = "+4915112345678", "+4915187654321"

	first, err := nextslot.Find(ctx, cal, "tire-change", customer, now, cfg.Timezone)
	require.NoError(t, err)
	require.False(t, first.Start.Before(now.Add(nextslot.Lead)), "in the future, with lead time")
	require.Equal(t, cfg.Timezone, first.Start.Location(), "stated in the business time zone")
	require.NotEqual(t, time.Sunday, first.Start.Weekday(), "the bays open Mon–Sat")
	require.GreaterOrEqual(t, first.Start.Hour(), 8, "inside opening hours")

	// The customer books it: for them the next slot is a later one (the
	// calendar would refuse an overlapping second tire change), for
	// someone else the same start on the other bay is still free.
	h, err := cal.CreateHold(ctx, "nextslot-hold", calendar.HoldRequest{Service: "tire-change", Start: first.Start, Customer: customer, Reference: "nextslot-test"})
	require.NoError(t, err)
	_, err = cal.ConfirmHold(ctx, "nextslot-confirm", h.ID)
	require.NoError(t, err)

	cases := []struct {
		name     string
		customer string
		later    bool
	}{
		{"the customer who booked it gets a later slot", customer, true},
		{"another customer gets the same start on the other bay", other, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := nextslot.Find(ctx, cal, "tire-change", tc.customer, now, cfg.Timezone)
			require.NoError(t, err)
			if tc.later {
				require.False(t, s.Start.Before(first.End), "after the booked slot: %s", s.Start)
			} else {
				require.True(t, s.Start.Equal(first.Start), "got %s, want %s", s.Start, first.Start)
			}
		})
	}
}
