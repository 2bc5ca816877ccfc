package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

// ---- item 6: a Redis front cache (seed 003) against the store alone -----

// redisOp is the operation item 6 serves: a handler that answers 201 with
// a small JSON body and a Location, like POST /v1/holds, and writes nothing.
const redisOp = "POST /bench/redis"

// The three paths item 6 measures, each with and without the front.
const (
	redisNew      = "new key: claim + complete"
	redisReplay   = "replay of a hot completed key"
	redisConflict = "hot key, other payload (422)"
	sidePG        = "store"
	sideFront     = "Redis front + store"
)

type redisResult struct {
	series   []*series                   // per concurrency: path by path, store then front
	redisCPU map[*series][]time.Duration // redis-server CPU per op, per run
}

func createdHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/bench/redis/"+r.Header.Get(idempotency.HeaderKey))
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"` + r.Header.Get(idempotency.HeaderKey) + `","status":"held","resource_id":"bench-00"}`))
	})
}

// redisHandlers returns the store alone and the front + store, both
// behind BearerAuth.
func redisHandlers(front *redisFront) (pg, fr http.Handler) {
	tokens := web.StaticTokens(map[string]string{token: tenant})
	return web.BearerAuth(tokens, front.store.Middleware(redisOp, createdHandler())),
		web.BearerAuth(tokens, front.Middleware(redisOp, createdHandler()))
}

// keyedCall calls h in-process with key and body and returns the answer.
func keyedCall(ctx context.Context, h http.Handler, key, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/bench/redis", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(idempotency.HeaderKey, key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// keyedOp is an Op calling h with key(seq) and body(seq), expecting want.
func keyedOp(h http.Handler, key, body func(seq int) string, want int) Op {
	return func(ctx context.Context, seq int) error {
		if w := keyedCall(ctx, h, key(seq), body(seq)); w.Code != want {
			return fmt.Errorf("key %s: status %d, want %d: %s", key(seq), w.Code, want, w.Body.String())
		}
		return nil
	}
}

// redisVariant is one measured path through one side.
type redisVariant struct {
	name string
	op   func(prefix string) Op
}

// redisVariants returns, for the store alone and then the front, the three
// paths: new keys, replays of a hot key and the hot key with another
// payload. It completes each side's hot key (and caches it in the front).
func redisVariants(t *testing.T, pg, fr http.Handler) []redisVariant {
	hotBody := func(int) string { return `{"n":0}` }
	otherBody := func(int) string { return `{"n":1}` }
	newBody := func(seq int) string { return `{"n":` + strconv.Itoa(seq) + `}` }
	newKey := func(p string) func(int) string { return func(seq int) string { return p + strconv.Itoa(seq) } }
	var variants []redisVariant
	for _, side := range []struct {
		name, hot string
		h         http.Handler
	}{{sidePG, "hot-store", pg}, {sideFront, "hot-front", fr}} {
		hot := func(int) string { return side.hot }
		variants = append(variants,
			redisVariant{redisNew + ", " + side.name, func(p string) Op { return keyedOp(side.h, newKey(p), newBody, http.StatusCreated) }},
			redisVariant{redisReplay + ", " + side.name, func(string) Op { return keyedOp(side.h, hot, hotBody, http.StatusCreated) }},
			redisVariant{redisConflict + ", " + side.name, func(string) Op {
				return keyedOp(side.h, hot, otherBody, http.StatusUnprocessableEntity)
			}},
		)
		for range 2 {
			require.Equal(t, http.StatusCreated, keyedCall(context.Background(), side.h, side.hot, hotBody(0)).Code)
		}
	}
	return variants
}

func measureRedis(t *testing.T, sz sizes) redisResult {
	rdb, err := dialRedis(context.Background())
	if err != nil {
		t.Skipf("item 6 needs Redis on %s, skipped: %v", redisAddr, err)
	}
	t.Cleanup(func() { require.NoError(t, rdb.Close()) })
	e := newEnv(t)
	run := make([]byte, 4)
	_, _ = rand.Read(run)
	front := &redisFront{
		rdb: rdb, store: idempotency.NewStore(e.pool, idempotency.Options{}),
		prefix: "bookonce-bench:" + hex.EncodeToString(run) + ":",
		ttl:    idempotency.DefaultTTL, lease: idempotency.DefaultLease,
	}
	t.Cleanup(func() { require.NoError(t, dropPrefix(context.Background(), rdb, front.prefix)) })
	pg, fr := redisHandlers(front)
	checkFrontAnswers(t, front, pg, fr)

	variants := redisVariants(t, pg, fr)
	// Order: new, replay, conflict for the store, then for the front; runs
	// interleave path by path so that both sides of a ratio run back to back.
	order := []int{0, 3, 1, 4, 2, 5}
	res := redisResult{redisCPU: map[*series][]time.Duration{}}
	seq, newOps, rcpu := 0, 0, procCPU("redis-server")
	runOnce := func(s *series, c int, op Op) int {
		l := sz.load(c)
		l.SeqBase = seq
		_, rcpu = redisCPU(rcpu)
		r := measure(t, s, l, op)
		var used time.Duration
		used, rcpu = redisCPU(rcpu)
		res.redisCPU[s] = append(res.redisCPU[s], used/time.Duration(r.Ops))
		seq += r.Ops
		return r.Ops
	}
	for _, c := range sz.concs {
		ss := make([]*series, 0, len(order))
		for _, i := range order {
			ss = append(ss, &series{variant: variants[i].name, conc: c})
		}
		for range sz.reps {
			for k, i := range order {
				if ops := runOnce(ss[k], c, variants[i].op(fmt.Sprintf("r%d-", i))); i%3 == 0 {
					newOps += ops
				}
			}
		}
		res.series = append(res.series, ss...)
	}
	// Every new key completed once in PostgreSQL, whichever side took it.
	require.Equal(t, newOps, countRows(t, e.pool, `SELECT count(*) FROM idempotency_keys
		WHERE operation = $1 AND state = 'completed' AND idempotency_key LIKE 'r%'`, redisOp))
	require.Zero(t, front.errors.Load(), "the front fell back on Redis errors")
	return res
}

// checkFrontAnswers requires that the front answers what the store does:
// a replay byte-identical to the store's, and the same 422 document for
// a reused key; and that without Redis it answers through PostgreSQL.
func checkFrontAnswers(t *testing.T, front *redisFront, pg, fr http.Handler) {
	ctx := context.Background()
	first := keyedCall(ctx, fr, "check-1", `{"n":1}`)
	require.Equal(t, http.StatusCreated, first.Code)
	fromPG := keyedCall(ctx, pg, "check-1", `{"n":1}`)      // the store replays
	fromRedis := keyedCall(ctx, fr, "check-1", `{"n":1}`)   // the front's cache answers
	reusedPG := keyedCall(ctx, pg, "check-1", `{"n":2}`)    // 422 by the store
	reusedRedis := keyedCall(ctx, fr, "check-1", `{"n":2}`) // 422 by the front
	for _, w := range []*httptest.ResponseRecorder{fromPG, fromRedis} {
		require.Equal(t, http.StatusCreated, w.Code)
		require.Equal(t, first.Body.Bytes(), w.Body.Bytes())
		require.Equal(t, "true", w.Header().Get(idempotency.HeaderReplayed))
		require.Equal(t, first.Header().Get("Location"), w.Header().Get("Location"))
	}
	require.Equal(t, http.StatusUnprocessableEntity, reusedPG.Code)
	require.Equal(t, reusedPG.Code, reusedRedis.Code)
	require.Equal(t, reusedPG.Body.String(), reusedRedis.Body.String())
	// Only the store's replay reached PostgreSQL (it counts replays).
	rec, err := front.store.Lookup(ctx, tenant, redisOp, "check-1")
	require.NoError(t, err)
	require.Equal(t, 1, rec.Replays)
	require.Equal(t, int64(1), front.fills.Load())

	// Redis down: every answer comes from PostgreSQL, as without the front.
	down := &redisFront{rdb: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1}),
		store: front.store, prefix: front.prefix, ttl: front.ttl, lease: front.lease}
	t.Cleanup(func() { require.NoError(t, down.rdb.Close()) })
	_, dh := redisHandlers(down)
	require.Equal(t, http.StatusCreated, keyedCall(ctx, dh, "check-down", `{"n":1}`).Code)
	again := keyedCall(ctx, dh, "check-down", `{"n":1}`)
	require.Equal(t, http.StatusCreated, again.Code)
	require.Equal(t, "true", again.Header().Get(idempotency.HeaderReplayed))
	require.Equal(t, http.StatusUnprocessableEntity, keyedCall(ctx, dh, "check-down", `{"n":2}`).Code)
	require.Positive(t, down.errors.Load())
}
