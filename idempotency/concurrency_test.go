package idempotency_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// checkOneEffect asserts the answers to identical concurrent requests: one
// first answer with status created, every other one a byte-identical
// replay or a 409.
func checkOneEffect(t *testing.T, resps []response, created int) {
	t.Helper()
	var first *response
	for i := range resps {
		r := &resps[i]
		switch {
		case r.status == created && !r.replayed:
			require.Nil(t, first, "two first answers for one key")
			first = r
		case r.status == http.StatusConflict:
			// The payment API answers in Stripe's words.
			require.Contains(t, []string{idempotency.CodeKeyInFlight, "idempotency_key_in_use"}, problemCode(t, *r))
			require.NotEmpty(t, r.header.Get("Retry-After"))
		default:
			require.Equal(t, created, r.status, "body %s", r.body)
			require.True(t, r.replayed)
		}
	}
	require.NotNil(t, first, "no request ran")
	for _, r := range resps {
		if r.replayed {
			require.Equal(t, first.body, r.body, "replay must be byte-identical")
			require.Equal(t, first.header.Get("Location"), r.header.Get("Location"))
		}
	}
}

// race runs do n times from goroutines released together.
func race(t *testing.T, n int, do func() (response, error)) []response {
	resps, errs := make([]response, n), make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			resps[i], errs[i] = do()
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return resps
}

// TestMatrix02ConcurrentSameKey proves failure-matrix item 2 (two identical
// requests race with one key): one request runs, the others get its
// stored answer or 409 while it runs; one effect per key, in the demo API
// and in the rows of the real calendar and payment APIs.
func TestMatrix02ConcurrentSameKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, idempotency.Options{})
	const perKey = 5
	fire := func(key, customer string) []response {
		body := []byte(fmt.Sprintf(`{"customer":%q}`, customer))
		return race(t, perKey, func() (response, error) { return e.call(context.Background(), "/v1/holds", "tok-a", key, body) })
	}

	t.Run("one key", func(t *testing.T) {
		checkOneEffect(t, fire("one-key", "solo"), http.StatusCreated)
		require.Equal(t, 1, e.effects("solo"))
	})

	t.Run("200 keys in parallel", func(t *testing.T) {
		const keys = 200
		all := make([][]response, keys)
		var wg sync.WaitGroup
		for k := range keys {
			wg.Go(func() { all[k] = fire(fmt.Sprintf("bulk-%03d", k), fmt.Sprintf("bulk-%03d", k)) })
		}
		wg.Wait()
		for _, resps := range all {
			checkOneEffect(t, resps, http.StatusCreated)
		}
		var rows, distinct int
		require.NoError(t, e.pool.QueryRow(context.Background(),
			`SELECT count(*), count(DISTINCT customer) FROM demo_effects WHERE customer LIKE 'bulk-%'`).Scan(&rows, &distinct))
		require.Equal(t, keys, rows)
		require.Equal(t, keys, distinct, "each key exactly one row")
	})

	t.Run("in flight while the first runs", func(t *testing.T) {
		// Deterministic: the first request is held inside its handler while
		// four duplicates arrive; they must all get 409, never a second run.
		entered, release := make(chan struct{}), make(chan struct{})
		e.hooks.Store("held", func() { close(entered); <-release })
		done := make(chan response, 1)
		go func() { done <- e.post("held-key", demoRequest{Customer: "held"}) }()
		<-entered
		for range 4 {
			r := e.post("held-key", demoRequest{Customer: "held"})
			require.Equal(t, http.StatusConflict, r.status)
			require.Equal(t, idempotency.CodeKeyInFlight, problemCode(t, r))
			require.Equal(t, "30", r.header.Get("Retry-After"), "seconds until the lease ends")
		}
		close(release)
		first := <-done
		require.Equal(t, http.StatusCreated, first.status)
		again := e.post("held-key", demoRequest{Customer: "held"})
		require.True(t, again.replayed)
		require.Equal(t, first.body, again.body)
		require.Equal(t, 1, e.effects("held"))
	})

	t.Run("real calendar and payment APIs", func(t *testing.T) {
		pool := testsupport.Database(t)
		cfg := testsupport.Config(t)
		slot := time.Now().In(cfg.Timezone).AddDate(0, 0, 7)
		if slot.Weekday() == time.Sunday {
			slot = slot.AddDate(0, 0, 1) // the bays are closed on Sundays
		}
		slot = time.Date(slot.Year(), slot.Month(), slot.Day(), 10, 0, 0, 0, cfg.Timezone)
		hold, err := json.Marshal(map[string]any{"service": "tire-change", "start": slot, "customer": "+4915112345678", "reference": "race-ref"})
		require.NoError(t, err)
		deposit := url.Values{"amount": {"2000"}, "currency": {"eur"}, "capture_method": {"manual"}, "confirm": {"true"},
			"payment_method": {"pm_card_visa"}, "metadata[booking_reference]": {"race-ref"}, "metadata[step]": {"deposit"}}
		for _, tc := range []struct {
			url, contentType, body, rows string
			created                      int
		}{
			{stacktest.CalendarAPI(t, cfg, pool).URL + "/v1/holds", "application/json", string(hold),
				`SELECT count(*) FROM calendar_reservations WHERE reference = 'race-ref'`, http.StatusCreated},
			{stacktest.PaymentsAPI(t, cfg, pool).URL + "/v1/payment_intents", "application/x-www-form-urlencoded", deposit.Encode(),
				`SELECT count(*) FROM payment_intents WHERE booking_reference = 'race-ref'`, http.StatusOK},
		} {
			resps := race(t, perKey, func() (response, error) {
				return send(context.Background(), e.http, tc.url, config.DefaultAPIToken, "race-key", tc.contentType, []byte(tc.body))
			})
			checkOneEffect(t, resps, tc.created)
			var rows int
			require.NoError(t, pool.QueryRow(context.Background(), tc.rows).Scan(&rows))
			require.Equal(t, 1, rows, tc.url)
		}
	})
}

// The client times out after the server did the work; the server still
// commits, and the retry gets the original answer.
func TestCommitThenLostResponse(t *testing.T) {
	t.Parallel()
	e := newEnv(t, idempotency.Options{})
	entered, release := make(chan struct{}), make(chan struct{})
	e.hooks.Store("lost", func() { close(entered); <-release })
	body := []byte(`{"customer":"lost"}`)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := e.call(ctx, "/v1/holds", "tok-a", "lost-key", body)
		errc <- err
	}()
	select {
	case <-entered:
	case err := <-errc:
		t.Fatalf("the client gave up before the handler ran: %v", err)
	}
	err := <-errc // the handler is blocked, so only the deadline ends this
	require.True(t, errors.Is(err, context.DeadlineExceeded), "client must time out, got %v", err)

	// A retry while the first attempt still runs is told to wait.
	r, err := e.call(context.Background(), "/v1/holds", "tok-a", "lost-key", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusConflict, r.status)

	close(release)
	rec := e.waitCompleted("tenant-a", opCreate, "lost-key")

	r, err = e.call(context.Background(), "/v1/holds", "tok-a", "lost-key", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.status)
	require.True(t, r.replayed)
	require.Equal(t, rec.Body, r.body, "the original answer, byte for byte")
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, 1, e.effects("lost"))
	require.Equal(t, "demo", rec.ResourceType)
	var out struct{ ID json.Number }
	require.NoError(t, json.Unmarshal(r.body, &out))
	require.Equal(t, rec.ResourceID, out.ID.String(), "the key row names the resource")
}

func TestLeaseExpiry(t *testing.T) {
	t.Parallel()
	t.Run("crashed holder is taken over once", func(t *testing.T) {
		e := newEnv(t, idempotency.Options{})
		body := []byte(`{"customer":"crash"}`)
		req, err := http.NewRequest(http.MethodPost, "/v1/holds", nil)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		fp, err := idempotency.Fingerprint(req, opCreate, body)
		require.NoError(t, err)
		now := e.clock.Now()
		// A process claimed the key and died: pending, lease ending in 10s.
		_, err = e.pool.Exec(context.Background(), `INSERT INTO idempotency_keys
			(tenant_id, operation, idempotency_key, fingerprint, state, owner, locked_until, created_at, expires_at)
			VALUES ('tenant-a', $1, 'crash-key', $2, 'pending', $3, $4, $5, $6)`,
			opCreate, fp[:], randomUUID(t), now.Add(10*time.Second), now, now.Add(72*time.Hour))
		require.NoError(t, err)

		r := e.postTo("/v1/holds", "tok-a", "crash-key", body)
		require.Equal(t, http.StatusConflict, r.status, "lease still valid")
		require.Equal(t, "10", r.header.Get("Retry-After"))

		e.clock.Advance(10 * time.Second) // the lease ends exactly now
		r = e.postTo("/v1/holds", "tok-a", "crash-key", body)
		require.Equal(t, http.StatusCreated, r.status, "body %s", r.body)
		require.False(t, r.replayed)
		again := e.postTo("/v1/holds", "tok-a", "crash-key", body)
		require.True(t, again.replayed)
		require.Equal(t, r.body, again.body)
		require.Equal(t, 1, e.effects("crash"))
	})

	t.Run("fencing: the late holder cannot commit", func(t *testing.T) {
		e := newEnv(t, idempotency.Options{Lease: 30 * time.Second})
		entered, release := make(chan struct{}), make(chan struct{})
		var stalled atomic.Bool
		e.hooks.Store("slow", func() {
			if stalled.CompareAndSwap(false, true) { // only the first holder stalls
				close(entered)
				<-release
			}
		})
		late := make(chan response, 1)
		go func() { late <- e.post("slow-key", demoRequest{Customer: "slow"}) }()
		<-entered // the slow holder's effect is written, uncommitted

		e.clock.Advance(31 * time.Second)
		second := e.post("slow-key", demoRequest{Customer: "slow"})
		require.Equal(t, http.StatusCreated, second.status, "body %s", second.body)
		require.False(t, second.replayed)

		close(release)
		first := <-late
		require.Equal(t, http.StatusConflict, first.status, "fenced holder must not report success: %s", first.body)
		require.Equal(t, idempotency.CodeKeyInFlight, problemCode(t, first))
		require.Equal(t, 1, e.effects("slow"), "the fenced effect was rolled back")

		replay := e.post("slow-key", demoRequest{Customer: "slow"})
		require.True(t, replay.replayed)
		require.Equal(t, second.body, replay.body)
	})
}

func randomUUID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
