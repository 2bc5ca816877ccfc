package tenants_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/tenants"
)

// withoutBay2 is the demo file without bay-2 (and the services no longer on it).
func withoutBay2(t *testing.T) tenants.File {
	t.Helper()
	text := string(deploy.DemoTenants)
	text = strings.Replace(text, "      - id: bay-2\n        name: Bay 2\n        kind: bay\n        hours:\n          mon-sat: 08:00-18:00\n", "", 1)
	text = strings.ReplaceAll(text, "[bay-1, bay-2, tech-anna]", "[bay-1, tech-anna]")
	f, err := tenants.Parse("tenants.yaml", []byte(text))
	require.NoError(t, err)
	return f
}

// A resource with a future booking is never removed: the apply is refused,
// names the booking and changes nothing. Once the booking is in the past,
// the resource is retired (kept for the booking's history) and the
// calendar no longer offers it.
func TestRemovingAResourceWithAFutureBookingIsRefused(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	monday := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	srv := &calendar.Server{
		Pool: pool, Idempotency: idempotency.NewStore(pool, idempotency.Options{Now: func() time.Time { return monday }}),
		Tokens: web.StaticTokens(map[string]string{"tok": "demo"}), Timezone: berlin, HoldTTL: 10 * time.Minute, Now: func() time.Time { return monday },
	}
	hs := httptest.NewServer(web.Service{Name: "calendar", Handler: srv.Handler()}.Mux())
	t.Cleanup(hs.Close)
	cal := calendar.NewClient(hs.URL, "tok")
	slot := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	hold, err := cal.CreateHold(ctx, "k1", calendar.HoldRequest{ResourceID: "bay-2", Service: "tire-change", Start: slot, Customer: "+4915112345678", Reference: "appointment:demo:x"})
	require.NoError(t, err)
	booking, err := cal.ConfirmHold(ctx, "k2", hold.ID)
	require.NoError(t, err)

	_, err = tenants.Apply(ctx, pool, withoutBay2(t), tenants.ApplyOptions{Now: func() time.Time { return monday }})
	var blocked *tenants.BlockedError
	require.ErrorAs(t, err, &blocked)
	require.ErrorIs(t, err, tenants.ErrRejected)
	require.Equal(t, []string{"resource demo/bay-2"}, blocked.Removals)
	require.Len(t, blocked.Bookings, 1)
	require.Equal(t, booking.ID, blocked.Bookings[0].ID)
	require.Contains(t, err.Error(), booking.ID)
	require.Contains(t, err.Error(), "appointment:demo:x")
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM calendar_resources WHERE tenant_id = 'demo' AND id = 'bay-2' AND retired_at IS NULL`))
	require.Equal(t, 3, count(t, pool, `SELECT count(*) FROM calendar_service_resources WHERE resource_id = 'bay-2'`), "refused: nothing changed")

	after := slot.Add(24 * time.Hour)
	diff, err := tenants.Apply(ctx, pool, withoutBay2(t), tenants.ApplyOptions{Now: func() time.Time { return after }})
	require.NoError(t, err)
	require.Contains(t, diff.String(), "- resource demo/bay-2")
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM calendar_resources WHERE id = 'bay-2' AND retired_at IS NOT NULL`), "kept for the booking")
	still, err := cal.GetBooking(ctx, booking.ID)
	require.NoError(t, err)
	require.Equal(t, "bay-2", still.ResourceID)
	_, err = cal.CreateHold(ctx, "k3", calendar.HoldRequest{ResourceID: "bay-2", Service: "tire-change", Start: slot.Add(time.Hour), Customer: "+4915112345679", Reference: "appointment:demo:y"})
	require.ErrorContains(t, err, "unknown resource")

	// Applying the demo file again brings bay-2 back into service.
	back, err := deploy.ApplyDemoTenants(ctx, pool, tenants.ApplyOptions{})
	require.NoError(t, err)
	require.Contains(t, back.String(), "+ resource demo/bay-2")
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM calendar_resources WHERE id = 'bay-2' AND retired_at IS NULL`))
}
