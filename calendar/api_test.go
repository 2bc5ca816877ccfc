package calendar_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/payments/stripeapi"
)

type fixture struct {
	pool   *pgxpool.Pool
	url    string
	client *calendar.Client
	clock  *clock
}

// clock is a settable time source, so hold expiry is tested without waiting.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func newFixture(t *testing.T) fixture {
	t.Helper()
	pool := testsupport.Database(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	clk := &clock{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)} // a Monday
	srv := &calendar.Server{
		Pool: pool, Idempotency: idempotency.NewStore(pool, idempotency.Options{Now: clk.Now}),
		Tokens: web.StaticTokens(map[string]string{"tok-demo": "demo", "tok-other": "other"}), Timezone: berlin,
		HoldTTL: 10 * time.Minute, Now: clk.Now,
	}
	hs := httptest.NewServer(web.Service{Name: "calendar", Handler: srv.Handler()}.Mux())
	t.Cleanup(hs.Close)
	return fixture{pool: pool, url: hs.URL, client: calendar.NewClient(hs.URL, "tok-demo"), clock: clk}
}

// tuesday14 is Tuesday 2026-12-01 14:00 in Berlin, inside opening hours.
var tuesday14 = time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)

func (f fixture) count(t *testing.T, where string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, f.pool.QueryRow(context.Background(), "SELECT count(*) FROM calendar_reservations WHERE "+where, args...).Scan(&n))
	return n
}

func hold(ref string) calendar.HoldRequest {
	return calendar.HoldRequest{ResourceID: "bay-1", Service: "tire-change", Start: tuesday14, Customer: "+4915112345678", Reference: ref}
}

func TestHoldConfirmCancelLifecycle(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h, err := f.client.CreateHold(ctx, "k-hold", hold("appointment:demo:1"))
	require.NoError(t, err)
	require.Equal(t, calendar.HoldHeld, h.Status)
	require.Equal(t, tuesday14.Add(30*time.Minute), h.End, "tire-change lasts 30 minutes")
	require.Equal(t, f.clock.Now().Add(10*time.Minute).UTC(), h.ExpiresAt)

	b, err := f.client.ConfirmHold(ctx, "k-confirm", h.ID)
	require.NoError(t, err)
	require.Equal(t, calendar.BookingConfirmed, b.Status)
	// Confirming again with another key answers the same booking.
	b2, err := f.client.ConfirmHold(ctx, "k-confirm-2", h.ID)
	require.NoError(t, err)
	require.Equal(t, b.ID, b2.ID)

	list, err := f.client.ListBookings(ctx, "+4915112345678")
	require.NoError(t, err)
	require.Len(t, list, 1)

	c1, err := f.client.CancelBooking(ctx, "k-cancel", b.ID)
	require.NoError(t, err)
	require.Equal(t, calendar.BookingCancelled, c1.Status)
	c2, err := f.client.CancelBooking(ctx, "k-cancel-again", b.ID)
	require.NoError(t, err, "cancelling a cancelled booking is a success")
	require.Equal(t, calendar.BookingCancelled, c2.Status)
	require.Equal(t, 1, f.count(t, "status = 'cancelled'"))
}

func TestReleaseIsIdempotentInEffect(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h, err := f.client.CreateHold(ctx, "k1", hold("ref-release"))
	require.NoError(t, err)
	for _, key := range []string{"rel-1", "rel-2", "rel-1"} {
		r, err := f.client.ReleaseHold(ctx, key, h.ID)
		require.NoError(t, err)
		require.Equal(t, calendar.HoldReleased, r.Status)
	}
	require.Equal(t, 1, f.count(t, "status = 'released'"))
	// The slot is free again.
	_, err = f.client.CreateHold(ctx, "k2", hold("ref-next"))
	require.NoError(t, err)
}

func TestExpiredHoldFreesSlotAndCannotConfirm(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h, err := f.client.CreateHold(ctx, "k1", hold("ref-a"))
	require.NoError(t, err)
	f.clock.Add(11 * time.Minute)
	_, err = f.client.ConfirmHold(ctx, "c1", h.ID)
	require.Equal(t, calendar.CodeHoldExpired, calendar.CodeOf(err))
	require.Equal(t, outcome.Final, outcome.Of(err))
	r, err := f.client.ReleaseHold(ctx, "r1", h.ID)
	require.NoError(t, err, "releasing an expired hold is a success")
	require.Equal(t, calendar.HoldExpired, r.Status)
	_, err = f.client.CreateHold(ctx, "k2", hold("ref-b"))
	require.NoError(t, err, "an expired hold no longer blocks its slot")
}

func TestReferenceProtectsAgainstChangedKeys(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	first, err := f.client.CreateHold(ctx, "run-1-key", hold("appointment:demo:ref"))
	require.NoError(t, err)
	// A reset workflow has a new run ID and so a new key: it gets its hold back.
	again, err := f.client.CreateHold(ctx, "run-2-key", hold("appointment:demo:ref"))
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
	// Another slot under the same reference is a conflict.
	other := hold("appointment:demo:ref")
	other.Start = tuesday14.Add(2 * time.Hour)
	_, err = f.client.CreateHold(ctx, "run-3-key", other)
	require.Equal(t, calendar.CodeReferenceConflict, calendar.CodeOf(err))
	require.Equal(t, 1, f.count(t, "reference = 'appointment:demo:ref'"))
}

func TestOverlappingHoldsOneWinsUnderConcurrency(t *testing.T) {
	f := newFixture(t)
	const n = 50
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := hold(fmt.Sprintf("ref-%d", i))
			// Different customers: the slot, not a customer's double
			// booking, is under test.
			req.Customer = fmt.Sprintf("+49151000000%02d", i)
			// Overlapping, not identical: starts spread over the 30 minutes.
			req.Start = tuesday14.Add(time.Duration(i%3) * 10 * time.Minute)
			_, errs[i] = f.client.CreateHold(context.Background(), fmt.Sprintf("key-%d", i), req)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		require.Equal(t, calendar.CodeSlotUnavailable, calendar.CodeOf(err), "%v", err)
	}
	require.Equal(t, 1, wins)
	require.Equal(t, 1, f.count(t, "resource_id = 'bay-1' AND status = 'held'"))
}

func TestSlotUnavailableIsStoredAndReplayed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.client.CreateHold(ctx, "k1", hold("ref-1"))
	require.NoError(t, err)
	body := `{"resource_id":"bay-1","service":"tire-change","start":"2026-12-01T14:00:00+01:00","customer":"+4915100000000","reference":"ref-2"}`
	first := post(t, f.url+"/v1/holds", "k2", body)
	require.Equal(t, http.StatusConflict, first.status)
	require.Contains(t, first.body, `"alternatives"`)
	// Even after the slot frees up, the same key replays the decided answer.
	_, err = f.client.ReleaseHold(ctx, "rel", mustHoldID(t, f, "ref-1"))
	require.NoError(t, err)
	second := post(t, f.url+"/v1/holds", "k2", body)
	require.Equal(t, first.status, second.status)
	require.Equal(t, first.body, second.body)
	require.Equal(t, "true", second.replayed)
}

func TestPickFreeResourceWhenNoneNamed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	req := hold("ref-1")
	req.ResourceID = ""
	a, err := f.client.CreateHold(ctx, "k1", req)
	require.NoError(t, err)
	req.Reference, req.Customer = "ref-2", "+4915100000000" // another customer
	b, err := f.client.CreateHold(ctx, "k2", req)
	require.NoError(t, err)
	require.NotEqual(t, a.ResourceID, b.ResourceID)
}

func TestAvailabilityExcludesBusySlots(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.client.CreateHold(ctx, "k1", hold("ref-1"))
	require.NoError(t, err)
	slots, err := f.client.Availability(ctx, "tire-change", "bay-1", tuesday14.Add(-time.Hour), tuesday14.Add(time.Hour))
	require.NoError(t, err)
	starts := map[time.Time]bool{}
	for _, s := range slots {
		starts[s.Start] = true
	}
	require.False(t, starts[tuesday14], "the held slot is not offered")
	require.True(t, starts[tuesday14.Add(-time.Hour)])
	require.True(t, starts[tuesday14.Add(30*time.Minute)])
}

func TestOperationLookupForReconciliation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h, err := f.client.CreateHold(ctx, "recon-key", hold("ref-1"))
	require.NoError(t, err)
	op, err := f.client.Operation(ctx, "recon-key", calendar.OpCreateHold)
	require.NoError(t, err)
	require.Equal(t, "completed", op.State)
	require.Equal(t, h.ID, op.ResourceID)
	require.Equal(t, http.StatusCreated, op.StatusCode)
	_, err = f.client.Operation(ctx, "never-sent", calendar.OpCreateHold)
	require.Equal(t, calendar.CodeNotFound, calendar.CodeOf(err))
}

func TestBadInputIsRejectedAndNothingWritten(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name, body, code string
		status           int
	}{
		{"malformed JSON", `{"service":`, "", http.StatusBadRequest},
		{"unknown field", `{"service":"tire-change","start":"2026-12-01T14:00:00+01:00","customer":"+49151","reference":"r","colour":"red"}`, calendar.CodeInvalidRequest, http.StatusBadRequest},
		{"time without zone", `{"service":"tire-change","start":"2026-12-01T14:00:00","customer":"+49151","reference":"r"}`, calendar.CodeInvalidRequest, http.StatusBadRequest},
		{"wrong type", `{"service":42,"start":"2026-12-01T14:00:00+01:00","customer":"+49151","reference":"r"}`, calendar.CodeInvalidRequest, http.StatusBadRequest},
		{"missing fields", `{}`, calendar.CodeInvalidRequest, http.StatusBadRequest},
		{"unknown service", `{"service":"car-wash","start":"2026-12-01T14:00:00+01:00","customer":"+49151","reference":"r"}`, calendar.CodeUnknownService, http.StatusUnprocessableEntity},
		{"unknown resource", `{"resource_id":"bay-9","service":"tire-change","start":"2026-12-01T14:00:00+01:00","customer":"+49151","reference":"r"}`, calendar.CodeUnknownResource, http.StatusUnprocessableEntity},
		{"outside opening hours", `{"service":"tire-change","start":"2026-12-01T19:00:00+01:00","customer":"+49151","reference":"r"}`, calendar.CodeOutsideOpeningHours, http.StatusUnprocessableEntity},
		{"sunday", `{"service":"tire-change","start":"2026-12-06T10:00:00+01:00","customer":"+49151","reference":"r"}`, calendar.CodeOutsideOpeningHours, http.StatusUnprocessableEntity},
		{"not on a minute", `{"service":"tire-change","start":"2026-12-01T14:00:30+01:00","customer":"+49151","reference":"r"}`, calendar.CodeInvalidRequest, http.StatusBadRequest},
		{"ttl too short", `{"service":"tire-change","start":"2026-12-01T14:00:00+01:00","customer":"+49151","reference":"r","ttl_seconds":59}`, calendar.CodeInvalidRequest, http.StatusBadRequest},
		{"ttl too long", `{"service":"tire-change","start":"2026-12-01T14:00:00+01:00","customer":"+49151","reference":"r","ttl_seconds":86401}`, calendar.CodeInvalidRequest, http.StatusBadRequest},
		{"negative ttl", `{"service":"tire-change","start":"2026-12-01T14:00:00+01:00","customer":"+49151","reference":"r","ttl_seconds":-5}`, calendar.CodeInvalidRequest, http.StatusBadRequest},
		{"ttl not a number", `{"service":"tire-change","start":"2026-12-01T14:00:00+01:00","customer":"+49151","reference":"r","ttl_seconds":"1h"}`, calendar.CodeInvalidRequest, http.StatusBadRequest},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := fmt.Sprintf("bad-%d", i)
			res := post(t, f.url+"/v1/holds", key, tc.body)
			require.Equal(t, tc.status, res.status, res.body)
			require.Equal(t, "application/problem+json", res.contentType)
			if tc.code != "" {
				require.Contains(t, res.body, `"code":"`+tc.code+`"`)
			}
			require.Zero(t, f.count(t, "true"))
			// Not stored: the key stays free for a corrected request.
			var keys int
			require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = $1`, key).Scan(&keys))
			require.Zero(t, keys)
		})
	}
}

func TestAuthIsRequiredAndTenantsAreSeparate(t *testing.T) {
	f := newFixture(t)
	req, err := http.NewRequest(http.MethodGet, f.url+"/v1/bookings", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	_, err = f.client.CreateHold(context.Background(), "k1", hold("ref-1"))
	require.NoError(t, err)
	other := calendar.NewClient(f.url, "tok-other")
	list, err := other.ListBookings(context.Background(), "")
	require.NoError(t, err)
	require.Empty(t, list)
	_, err = other.CreateHold(context.Background(), "k1", hold("ref-1"))
	require.Equal(t, calendar.CodeUnknownService, calendar.CodeOf(err), "tenant other has no catalogue")
}

type result struct {
	status                      int
	body, contentType, replayed string
}

func post(t *testing.T, url, key, body string) result {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok-demo")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var sb strings.Builder
	_, err = io.Copy(&sb, resp.Body)
	require.NoError(t, err)
	return result{resp.StatusCode, sb.String(), resp.Header.Get("Content-Type"), resp.Header.Get("Idempotent-Replayed")}
}

func mustHoldID(t *testing.T, f fixture, ref string) string {
	t.Helper()
	var id string
	require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT id FROM calendar_reservations WHERE reference = $1`, ref).Scan(&id))
	return id
}

// TestMatrix08LateRetryAfterKeyExpiry proves failure-matrix item 8 (an
// idempotency record expires and a genuine late retry arrives): the keys
// are past their retention and reaped when the late retries of the hold
// and of the deposit authorisation arrive. Both run anew, yet the business
// constraints hold: the reference finds the one reservation, and the
// partial unique index on booking reference + step leaves one live
// authorisation, captured once.
func TestMatrix08LateRetryAfterKeyExpiry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	pay := f.payments(t)
	const ref = "appointment:demo:late"
	h, err := f.client.CreateHold(ctx, "late-key", hold(ref))
	require.NoError(t, err)
	b, err := f.client.ConfirmHold(ctx, "late-confirm", h.ID)
	require.NoError(t, err)
	deposit := payments.Authorization{Amount: 2000, Currency: "eur", Reference: ref, Step: "deposit", PaymentMethod: "pm_card_visa"}
	pi, err := pay.Authorize(ctx, "late-auth", deposit)
	require.NoError(t, err)
	_, err = pay.Capture(ctx, "late-capture", pi.ID)
	require.NoError(t, err)

	f.clock.Add(73 * time.Hour)
	reaped, err := idempotency.NewStore(f.pool, idempotency.Options{Now: f.clock.Now}).Reap(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 4, reaped, "hold, confirm, authorisation and capture keys are gone")

	again, err := f.client.CreateHold(ctx, "late-key", hold(ref))
	require.NoError(t, err)
	require.Equal(t, h.ID, again.ID, "the reference finds the first reservation")
	require.Equal(t, calendar.HoldConfirmed, again.Status)
	require.Equal(t, b.ID, again.BookingID)
	require.Equal(t, 1, f.count(t, "reference = $1", ref))

	late, err := pay.Authorize(ctx, "late-auth", deposit)
	require.NoError(t, err)
	require.Equal(t, pi.ID, late.ID, "the reference and step find the first authorisation")
	var intents, captured int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount_captured), 0) FROM payment_intents
		WHERE booking_reference = $1`, ref).Scan(&intents, &captured))
	require.Equal(t, 1, intents, "no second authorisation")
	require.Equal(t, 2000, captured, "captured once")
}

// payments serves the payment API on the fixture's database and clock and
// returns the gateway the worker uses on it.
func (f fixture) payments(t *testing.T) *payments.StripeGateway {
	t.Helper()
	srv := &stripeapi.Server{
		Pool: f.pool, Idempotency: idempotency.NewStore(f.pool, idempotency.Options{Now: f.clock.Now, ProblemStyle: idempotency.StripeJSON}),
		Tokens: web.StaticTokens(map[string]string{"sk_test_demo": "demo"}), Now: f.clock.Now, Logger: slog.New(slog.DiscardHandler),
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return payments.NewStripeGateway(hs.URL, "sk_test_demo", hs.Client())
}

// A hold asks for its own lifetime (a payment link's); without one it
// gets the server's HoldTTL.
func TestHoldTTLSeconds(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	req := hold("ref-ttl")
	req.TTLSeconds = 37 * 60
	h, err := f.client.CreateHold(ctx, "k-ttl", req)
	require.NoError(t, err)
	require.Equal(t, f.clock.Now().Add(37*time.Minute).UTC(), h.ExpiresAt)
	other := hold("ref-default-ttl")
	other.Start, other.Customer = tuesday14.Add(time.Hour), "+4915100000001"
	d, err := f.client.CreateHold(ctx, "k-default", other)
	require.NoError(t, err)
	require.Equal(t, f.clock.Now().Add(10*time.Minute).UTC(), d.ExpiresAt, "the fixture's HoldTTL")
}
