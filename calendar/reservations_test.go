package calendar_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
)

// TestReservationsListsOneStateAcrossReferences: the reconciler's sweep
// lists held holds and confirmed bookings of every reference, bounded by
// creation time; an unknown state is refused.
func TestReservationsListsOneStateAcrossReferences(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i, ref := range []string{"appointment:demo:a", "appointment:demo:b", "desk-1"} {
		req := hold(ref)
		req.Start = tuesday14.Add(time.Duration(i) * time.Hour)
		h, err := f.client.CreateHold(ctx, "k-"+ref, req)
		require.NoError(t, err)
		f.clock.Add(time.Second) // created_at is the server's clock
		if ref == "desk-1" {
			_, err = f.client.ConfirmHold(ctx, "k-confirm", h.ID)
			require.NoError(t, err)
		}
	}
	held, err := f.client.Reservations(ctx, calendar.HoldHeld, time.Time{}, time.Time{})
	require.NoError(t, err)
	require.Len(t, held, 2)
	require.Equal(t, "appointment:demo:a", held[0].Reference, "oldest first")
	booked, err := f.client.Reservations(ctx, calendar.HoldConfirmed, f.clock.Now().Add(-time.Hour), f.clock.Now())
	require.NoError(t, err)
	require.Len(t, booked, 1)
	require.NotEmpty(t, booked[0].BookingID)
	none, err := f.client.Reservations(ctx, calendar.HoldHeld, time.Time{}, f.clock.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Empty(t, none, "created_before excludes newer ones")
	_, err = f.client.Reservations(ctx, calendar.HoldReleased, time.Time{}, time.Time{})
	require.Equal(t, calendar.CodeInvalidRequest, calendar.CodeOf(err))
}
