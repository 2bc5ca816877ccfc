package idempotency_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

func TestPayloadAndScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t, idempotency.Options{})
	first := e.postTo("/v1/holds", "tok-a", "k1", []byte(`{"customer":"anna","mode":""}`))
	require.Equal(t, http.StatusCreated, first.status)

	t.Run("other payload is 422 and changes nothing", func(t *testing.T) {
		r := e.postTo("/v1/holds", "tok-a", "k1", []byte(`{"customer":"bob"}`))
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
		require.Equal(t, idempotency.CodeKeyReused, problemCode(t, r))
		require.Equal(t, 0, e.effects("bob"))
		rec, err := e.store.Lookup(context.Background(), "tenant-a", opCreate, "k1")
		require.NoError(t, err)
		require.Equal(t, first.body, rec.Body)
	})

	t.Run("reordered keys and whitespace are the same request", func(t *testing.T) {
		r := e.postTo("/v1/holds", "tok-a", "k1", []byte("{ \"mode\" : \"\",\n\t\"customer\":\"anna\" }"))
		require.Equal(t, http.StatusCreated, r.status)
		require.True(t, r.replayed)
		require.Equal(t, first.body, r.body)
		require.Equal(t, 1, e.effects("anna"))
	})

	t.Run("same key under another tenant is independent", func(t *testing.T) {
		r := e.postTo("/v1/holds", "tok-b", "k1", []byte(`{"customer":"anna","mode":""}`))
		require.Equal(t, http.StatusCreated, r.status)
		require.False(t, r.replayed)
		require.Equal(t, 2, e.effects("anna"))
	})

	t.Run("same key under another operation is independent", func(t *testing.T) {
		r := e.postTo("/v1/other", "tok-a", "k1", []byte(`{"customer":"anna","mode":""}`))
		require.Equal(t, http.StatusCreated, r.status)
		require.False(t, r.replayed)
		require.Equal(t, 3, e.effects("anna"))
	})

	t.Run("path parameters are part of the payload", func(t *testing.T) {
		r := e.postTo("/v1/holds/h-1/confirm", "tok-a", "k2", demoRequest{Customer: "carl"})
		require.Equal(t, http.StatusCreated, r.status)
		r = e.postTo("/v1/holds/h-2/confirm", "tok-a", "k2", demoRequest{Customer: "carl"})
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		r = e.postTo("/v1/holds/h-1/confirm", "tok-a", "k2", demoRequest{Customer: "carl"})
		require.True(t, r.replayed)
		require.Equal(t, 1, e.effects("carl"))
	})
}

func TestNotStoredOutcomes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, idempotency.Options{})
	for _, tc := range []struct {
		name, mode string
		status     int
	}{
		{"4xx validation", "invalid", http.StatusBadRequest},
		{"5xx", "fail", http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "not-stored-" + tc.mode
			r := e.post(key, demoRequest{Customer: key, Mode: tc.mode})
			require.Equal(t, tc.status, r.status)
			require.False(t, r.replayed)
			require.Equal(t, 0, e.effects(key), "the handler's effect is rolled back")
			_, err := e.store.Lookup(context.Background(), "tenant-a", opCreate, key)
			require.ErrorIs(t, err, idempotency.ErrNotFound, "the key is released")

			// The corrected retry (another payload) may use the same key.
			r = e.post(key, demoRequest{Customer: key})
			require.Equal(t, http.StatusCreated, r.status, "body %s", r.body)
			require.False(t, r.replayed)
			require.Equal(t, 1, e.effects(key))
		})
	}

	t.Run("panic", func(t *testing.T) {
		_, err := e.call(context.Background(), "/v1/holds", "tok-a", "panic-key", []byte(`{"customer":"p","mode":"panic"}`))
		require.Error(t, err, "net/http drops the connection of a panicking handler")
		require.Equal(t, 0, e.effects("p"))
		_, err = e.store.Lookup(context.Background(), "tenant-a", opCreate, "panic-key")
		require.ErrorIs(t, err, idempotency.ErrNotFound)
		r := e.post("panic-key", demoRequest{Customer: "p"})
		require.Equal(t, http.StatusCreated, r.status)
	})

	t.Run("kept 409 is stored and replayed", func(t *testing.T) {
		r := e.post("kept", demoRequest{Customer: "k", Mode: "slot_unavailable"})
		require.Equal(t, http.StatusConflict, r.status)
		require.False(t, r.replayed)
		require.Equal(t, "slot_unavailable", problemCode(t, r))
		again := e.post("kept", demoRequest{Customer: "k", Mode: "slot_unavailable"})
		require.Equal(t, http.StatusConflict, again.status)
		require.True(t, again.replayed)
		require.Equal(t, r.body, again.body, "byte-identical")
		require.Equal(t, "application/problem+json", again.header.Get("Content-Type"))
		rec, err := e.store.Lookup(context.Background(), "tenant-a", opCreate, "kept")
		require.NoError(t, err)
		require.Equal(t, idempotency.StateCompleted, rec.State)
		require.Equal(t, http.StatusConflict, rec.StatusCode)
		require.Equal(t, 1, rec.Replays)
	})
}

func TestRejectedBeforeClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t, idempotency.Options{})
	valid := []byte(`{"customer":"x"}`)
	for _, tc := range []struct {
		name   string
		key    []string // nil: no header
		body   []byte
		status int
		code   string
	}{
		{"missing", nil, valid, 400, idempotency.CodeKeyMissing},
		{"empty", []string{""}, valid, 400, idempotency.CodeKeyMissing},
		{"256 bytes", []string{strings.Repeat("k", 256)}, valid, 400, idempotency.CodeKeyInvalid},
		{"non-ASCII", []string{"schlüssel"}, valid, 400, idempotency.CodeKeyInvalid},
		{"control character", []string{"key\x01"}, valid, 400, idempotency.CodeKeyInvalid},
		{"inner space", []string{"my key"}, valid, 400, idempotency.CodeKeyInvalid},
		{"two headers", []string{"a", "b"}, valid, 400, idempotency.CodeKeyInvalid},
		{"malformed JSON", []string{"ok-key"}, []byte(`{"customer":`), 400, idempotency.CodeMalformedBody},
		{"duplicate JSON member", []string{"ok-key"}, []byte(`{"customer":"a","customer":"b"}`), 400, idempotency.CodeMalformedBody},
		{"body over 1 MiB", []string{"ok-key"}, []byte(`"` + strings.Repeat("a", 1<<20) + `"`), 413, idempotency.CodeBodyTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Through the handler directly: net/http clients refuse to send
			// some of these header values at all.
			req := httptest.NewRequest(http.MethodPost, "/v1/holds", strings.NewReader(string(tc.body)))
			req = req.WithContext(web.WithTenant(req.Context(), "tenant-a"))
			req.Header.Set("Content-Type", "application/json")
			for _, k := range tc.key {
				req.Header.Add("Idempotency-Key", k)
			}
			w := httptest.NewRecorder()
			e.store.Middleware(opCreate, http.HandlerFunc(e.demo)).ServeHTTP(w, req)
			require.Equal(t, tc.status, w.Code)
			require.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
			require.Equal(t, tc.code, problemCode(t, response{body: w.Body.Bytes()}))
			require.Equal(t, 0, e.keyRows(), "nothing stored")
			require.Equal(t, 0, e.effects(""))
		})
	}

	t.Run("over the wire", func(t *testing.T) {
		r := e.postTo("/v1/holds", "tok-a", "", valid)
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Equal(t, idempotency.CodeKeyMissing, problemCode(t, r))
		r = e.postTo("/v1/holds", "tok-a", "has space", valid)
		require.Equal(t, idempotency.CodeKeyInvalid, problemCode(t, r))
		require.Equal(t, 0, e.keyRows())
	})

	t.Run("no tenant is 401", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, "/v1/holds", strings.NewReader(string(valid)))
		req.Header.Set("Idempotency-Key", "k")
		w := httptest.NewRecorder()
		e.store.Middleware(opCreate, http.HandlerFunc(e.demo)).ServeHTTP(w, req)
		require.Equal(t, http.StatusUnauthorized, w.Code)
		require.Equal(t, 0, e.keyRows())
	})

	t.Run("Stripe style", func(t *testing.T) {
		s := idempotency.NewStore(e.pool, idempotency.Options{ProblemStyle: idempotency.StripeJSON, Now: e.clock.Now})
		req := httptest.NewRequest(http.MethodPost, "/v1/payment_intents", strings.NewReader("amount=100"))
		req = req.WithContext(web.WithTenant(req.Context(), "tenant-a"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		s.Middleware("POST /v1/payment_intents", http.HandlerFunc(e.demo)).ServeHTTP(w, req)
		require.Equal(t, http.StatusBadRequest, w.Code)
		require.Equal(t, "application/json", w.Header().Get("Content-Type"))
		var doc struct {
			Error struct{ Type, Code, Message string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
		require.Equal(t, "idempotency_error", doc.Error.Type)
		require.Equal(t, idempotency.CodeKeyMissing, doc.Error.Code)
		require.NotEmpty(t, doc.Error.Message)
	})
}

func TestQuota(t *testing.T) {
	t.Parallel()
	e := newEnv(t, idempotency.Options{QuotaPerMinute: 3})
	for _, k := range []string{"q1", "q2", "q3"} {
		require.Equal(t, http.StatusCreated, e.post(k, demoRequest{Customer: k}).status)
	}
	r := e.post("q4", demoRequest{Customer: "q4"})
	require.Equal(t, http.StatusTooManyRequests, r.status)
	require.Equal(t, idempotency.CodeRateLimited, problemCode(t, r))
	require.Equal(t, "50", r.header.Get("Retry-After"), "the clock is at :10, the window ends at :00")
	_, err := e.store.Lookup(context.Background(), "tenant-a", opCreate, "q4")
	require.ErrorIs(t, err, idempotency.ErrNotFound, "a rejected key is not stored")
	require.Equal(t, 0, e.effects("q4"))

	// Replays are not new keys; another tenant has its own quota.
	require.True(t, e.post("q1", demoRequest{Customer: "q1"}).replayed)
	require.Equal(t, http.StatusCreated, e.postTo("/v1/holds", "tok-b", "q4", demoRequest{Customer: "q4"}).status)

	e.clock.Advance(time.Minute)
	r = e.post("q4", demoRequest{Customer: "q4"})
	require.Equal(t, http.StatusCreated, r.status, "a new minute, a new quota")
	require.Equal(t, 2, e.effects("q4"))
}

// TestStripeStyleSpeaksStripesCodes: in Stripe's style the conflicts a
// client switches on carry the codes Stripe sends (stripe-go names them):
// a key whose first request still runs is 409 idempotency_key_in_use, a
// quota met is 429 rate_limit, both with Retry-After.
func TestStripeStyleSpeaksStripesCodes(t *testing.T) {
	t.Parallel()
	t.Run("in flight", func(t *testing.T) {
		e := newEnv(t, idempotency.Options{ProblemStyle: idempotency.StripeJSON})
		entered, release := make(chan struct{}), make(chan struct{})
		var stalled atomic.Bool
		e.hooks.Store("slow", func() {
			if stalled.CompareAndSwap(false, true) {
				close(entered)
				<-release
			}
		})
		first := make(chan response, 1)
		go func() { first <- e.post("busy-key", demoRequest{Customer: "slow"}) }()
		<-entered
		second := e.post("busy-key", demoRequest{Customer: "slow"})
		close(release)
		require.Equal(t, http.StatusCreated, (<-first).status)
		require.Equal(t, http.StatusConflict, second.status, "body %s", second.body)
		require.Equal(t, "idempotency_key_in_use", problemCode(t, second))
		require.NotEmpty(t, second.header.Get("Retry-After"))
	})
	t.Run("quota", func(t *testing.T) {
		e := newEnv(t, idempotency.Options{ProblemStyle: idempotency.StripeJSON, QuotaPerMinute: 1})
		require.Equal(t, http.StatusCreated, e.post("q1", demoRequest{Customer: "q1"}).status)
		r := e.post("q2", demoRequest{Customer: "q2"})
		require.Equal(t, http.StatusTooManyRequests, r.status)
		require.Equal(t, "rate_limit", problemCode(t, r))
		require.NotEmpty(t, r.header.Get("Retry-After"))
	})
}
