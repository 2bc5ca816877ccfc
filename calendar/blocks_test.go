package calendar_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/outcome"
)

// staffEvent blocks bay-1 (and only bay-1) at tuesday14 for an hour, as
// the mirror of the shop's calendar sends it.
func staffEvent(uid string) calendar.BlocksRequest {
	return calendar.BlocksRequest{
		From: tuesday14.Add(-24 * time.Hour), To: tuesday14.Add(24 * time.Hour),
		Blocks: []calendar.Block{{UID: uid, Start: tuesday14, End: tuesday14.Add(time.Hour)}},
	}
}

func offered(t *testing.T, f fixture, resource string) map[time.Time]bool {
	t.Helper()
	slots, err := f.client.Availability(context.Background(), "tire-change", resource, tuesday14.Add(-time.Hour), tuesday14.Add(2*time.Hour))
	require.NoError(t, err)
	starts := map[time.Time]bool{}
	for _, s := range slots {
		starts[s.Start] = true
	}
	return starts
}

// TestBlockTakesTheSlotUntilStaffRemoveIt: what staff entered in the
// shop's calendar is not offered, a hold on it goes to another bay or is
// refused with alternatives, and once staff delete it (the next mirror of
// the window lacks it) the slot is free again.
func TestBlockTakesTheSlotUntilStaffRemoveIt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	res, err := f.client.ReplaceBlocks(ctx, "bay-1", staffEvent("oil-change@frontdesk"))
	require.NoError(t, err)
	require.Equal(t, 1, res.Stored)
	require.Empty(t, res.Conflicts)

	starts := offered(t, f, "bay-1")
	require.False(t, starts[tuesday14], "the staff event's time is not offered")
	require.False(t, starts[tuesday14.Add(30*time.Minute)])
	require.True(t, starts[tuesday14.Add(time.Hour)], "after it the bay is free")
	require.True(t, offered(t, f, "bay-2")[tuesday14], "another bay's calendar is its own")

	_, err = f.client.CreateHold(ctx, "k1", hold("ref-named"))
	require.Equal(t, calendar.CodeSlotUnavailable, calendar.CodeOf(err), "a hold on the blocked bay is refused")
	require.Equal(t, outcome.Final, outcome.Of(err))
	var ce *calendar.Error
	require.ErrorAs(t, err, &ce)
	require.NotEmpty(t, ce.Alternatives)
	for _, a := range ce.Alternatives {
		require.False(t, a.Start.Before(tuesday14.Add(time.Hour)) && a.Start.Add(30*time.Minute).After(tuesday14), "no alternative inside the block: %v", a)
	}
	anyBay := hold("ref-any")
	anyBay.ResourceID = ""
	h, err := f.client.CreateHold(ctx, "k2", anyBay)
	require.NoError(t, err)
	require.NotEqual(t, "bay-1", h.ResourceID, "a hold on any bay takes one staff left free")

	res, err = f.client.ReplaceBlocks(ctx, "bay-1", calendar.BlocksRequest{From: staffEvent("").From, To: staffEvent("").To})
	require.NoError(t, err)
	require.Zero(t, res.Stored)
	require.True(t, offered(t, f, "bay-1")[tuesday14], "deleted by staff: free again")
	after := hold("ref-after")
	after.Customer = "+4915100000000" // the customer of ref-any holds this time on another bay
	_, err = f.client.CreateHold(ctx, "k3", after)
	require.NoError(t, err)
}

// TestBlockOverABookingIsAConflict: staff enter an event over a booking
// the agent made before: the block is kept (the bay is taken for anything
// new), the booking stays as it is, and every mirror of the window names
// the booking and the event, for a person to decide.
func TestBlockOverABookingIsAConflict(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h, err := f.client.CreateHold(ctx, "k1", hold("ref-booked"))
	require.NoError(t, err)
	b, err := f.client.ConfirmHold(ctx, "c1", h.ID)
	require.NoError(t, err)
	held, err := f.client.CreateHold(ctx, "k2", calendar.HoldRequest{ResourceID: "bay-1", Service: "tire-change",
		Start: tuesday14.Add(30 * time.Minute), Customer: "+4915100000000", Reference: "ref-held"})
	require.NoError(t, err)

	for range 2 {
		res, err := f.client.ReplaceBlocks(ctx, "bay-1", staffEvent("inspection@frontdesk"))
		require.NoError(t, err)
		require.Len(t, res.Conflicts, 1, "the confirmed booking; a hold still open is not yet one")
		c := res.Conflicts[0]
		require.Equal(t, b.ID, c.Booking.ID)
		require.Equal(t, "ref-booked", c.Booking.Reference)
		require.Equal(t, "inspection@frontdesk", c.Block.UID)
		require.True(t, c.Block.Start.Equal(tuesday14))
	}
	require.Equal(t, 1, f.count(t, "status = 'confirmed'"), "nothing is cancelled by a block")
	require.Equal(t, 1, f.count(t, "id = $1 AND status = 'held'", held.ID))
}

// TestBadBlocksAreRefusedAndNothingChanges: a malformed window or block is
// a 400 naming the field, and the blocks stored before stay as they were.
func TestBadBlocksAreRefusedAndNothingChanges(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.client.ReplaceBlocks(ctx, "bay-1", staffEvent("kept"))
	require.NoError(t, err)
	bad := map[string]calendar.BlocksRequest{
		"to before from":   {From: tuesday14, To: tuesday14.Add(-time.Hour)},
		"end before start": {From: tuesday14, To: tuesday14.Add(time.Hour), Blocks: []calendar.Block{{UID: "x", Start: tuesday14, End: tuesday14}}},
		"no uid":           {From: tuesday14, To: tuesday14.Add(time.Hour), Blocks: []calendar.Block{{Start: tuesday14, End: tuesday14.Add(time.Minute)}}},
		"outside window":   {From: tuesday14, To: tuesday14.Add(time.Hour), Blocks: []calendar.Block{{UID: "x", Start: tuesday14.Add(2 * time.Hour), End: tuesday14.Add(3 * time.Hour)}}},
	}
	for name, req := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := f.client.ReplaceBlocks(ctx, "bay-1", req)
			require.Equal(t, calendar.CodeInvalidRequest, calendar.CodeOf(err))
			require.Equal(t, outcome.Final, outcome.Of(err))
		})
	}
	_, err = f.client.ReplaceBlocks(ctx, "bay-9", staffEvent("x"))
	require.Equal(t, calendar.CodeUnknownResource, calendar.CodeOf(err))
	require.False(t, offered(t, f, "bay-1")[tuesday14], "the block stored before is still there")

	req, err := http.NewRequest(http.MethodPut, f.url+"/v1/resources/bay-1/blocks", strings.NewReader(`{"from":"2026-12-01T00:00:00Z","to":"2026-12-02T00:00:00Z","blocks":[],"extra":1}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok-demo")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "an unknown field is refused, not ignored")
	require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
}
