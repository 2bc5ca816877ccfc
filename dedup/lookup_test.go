package dedup_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/dedup"
)

// TestUpcomingListsOpenFutureIntentsOfTheCustomer: a cancellation wish can
// mean an open intent with a slot ahead; not one whose appointment ended
// without a booking, not a past slot, not another customer's.
func TestUpcomingListsOpenFutureIntentsOfTheCustomer(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	s.Window = 0 // every wish is new: no review between them
	later, earlier := now.Add(72*time.Hour), now.Add(48*time.Hour)
	for i, in := range []struct {
		id, customer string
		start        time.Time
	}{
		{"later", "+4915112345678", later},
		{"earlier", "+4915112345678", earlier},
		{"closed", "+4915112345678", later.Add(time.Hour)},
		{"past", "+4915112345678", now.Add(-time.Hour)},
		{"other", "+4915199999999", later},
	} {
		x := intent(in.id, "tire-change", "whatsapp", "ev-"+in.id, in.start)
		x.Customer = in.customer
		_, err := s.Decide(ctx, "key-"+in.id, x)
		require.NoError(t, err, "intent %d", i)
	}
	require.NoError(t, s.Close(ctx, "demo", "closed", "appointment:demo:closed"))

	got, err := s.Upcoming(ctx, "demo", "+4915112345678")
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "earlier", got[0].IntentID, "earliest slot first")
	require.Equal(t, "appointment:demo:earlier", got[0].WorkflowID)
	require.True(t, got[0].SlotStart.Equal(earlier))
	require.Equal(t, "later", got[1].IntentID)
	require.Equal(t, "whatsapp", got[0].Channel, "where the wish came from")
	require.False(t, got[0].CreatedAt.IsZero(), "when its intent was recorded")
}

// TestStartedAfterIsABookingBesideTheConversationAfterTheWish: a change
// wish received at a moment cannot mean a booking an agent or the API
// started after it; a booking of the conversation's own channels was
// started by an earlier wish of the customer's, however late its intent
// was recorded, and without a time nothing is left out.
func TestStartedAfterIsABookingBesideTheConversationAfterTheWish(t *testing.T) {
	wish := time.Date(2026, 12, 7, 4, 29, 36, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		channel string
		created time.Time
		at      time.Time
		want    bool
	}{
		{"an agent's, after the wish", "agent", wish.Add(2 * time.Second), wish, true},
		{"the API's, after the wish", "api", wish.Add(time.Second), wish, true},
		{"an agent's, before the wish", "agent", wish.Add(-time.Second), wish, false},
		{"WhatsApp's, recorded after the wish", "whatsapp", wish.Add(time.Second), wish, false},
		{"a call's, recorded after the wish", "voice", wish.Add(time.Second), wish, false},
		{"no wish time", "agent", wish.Add(time.Second), time.Time{}, false},
		{"no record time (a lookup before it was read)", "agent", time.Time{}, wish, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := dedup.Booked{Channel: tc.channel, CreatedAt: tc.created}
			require.Equal(t, tc.want, b.StartedAfter(tc.at))
		})
	}
}
