package bench

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

// redisFront is the Redis front cache of seed 003, as a prototype for
// item 6 (bench code only: it was measured and not adopted, see
// docs/benchmarks.md). It sits in front of the store's middleware and
// keeps PostgreSQL the truth:
//
//   - Every request runs frontScript: SETNX of a pending marker carrying
//     the payload hash (TTL = the lease) and, when the key exists, the
//     Lua compare of the payload hash, in one round trip.
//   - Only a completed response is cached (after PostgreSQL committed it,
//     with a TTL that ends before the key's retention in PostgreSQL). A
//     cached entry answers a replay (same hash) or the 422 of a reused key
//     (other hash) without PostgreSQL: a completed response never changes.
//   - A pending marker decides nothing: it is written before PostgreSQL
//     decided anything and is not cleared reliably when the request is
//     released, so letting it answer 409 or 422 would let Redis block a
//     retry PostgreSQL would run. The request goes on to the store.
//   - A Redis miss or error goes on to the store, which decides as always.
type redisFront struct {
	rdb    *redis.Client
	store  *idempotency.Store
	prefix string        // namespaces this run's keys in a shared Redis
	ttl    time.Duration // the store's retention
	lease  time.Duration // the store's lease
	errors atomic.Int64  // Redis errors that fell back to PostgreSQL
	fills  atomic.Int64  // completed responses cached
}

// frontScript is SETNX + the compare. KEYS[1]: the key; ARGV[1]: the
// payload hash (hex, 64 characters); ARGV[2]: the pending marker's TTL
// in ms. An entry is 'p' + hash (pending) or 'd' + hash + the response.
var frontScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], 'p' .. ARGV[1], 'PX', ARGV[2])
  return {'new'}
end
if string.sub(v, 1, 1) ~= 'd' then return {'pending'} end
if string.sub(v, 2, 65) ~= ARGV[1] then return {'mismatch'} end
return {'hit', string.sub(v, 66)}
`)

// cachedResponse is a completed response as the front stores it.
type cachedResponse struct {
	Status  int         `json:"s"`
	Headers http.Header `json:"h"`
	Body    []byte      `json:"b"`
}

// maxCachedBody bounds what the front copies into Redis.
const maxCachedBody = 64 << 10

// Middleware wraps the store's middleware for operation around next.
func (f *redisFront) Middleware(operation string, next http.Handler) http.Handler {
	inner := f.store.Middleware(operation, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		tenant, _ := web.Tenant(r.Context())
		key := r.Header.Get(idempotency.HeaderKey)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, idempotency.MaxBodyBytes))
		if err != nil || key == "" || tenant == "" {
			// The store answers every malformed request; nothing to cache.
			r.Body = io.NopCloser(bytes.NewReader(body))
			inner.ServeHTTP(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fp, err := idempotency.Fingerprint(r, operation, body)
		if err != nil {
			inner.ServeHTTP(w, r)
			return
		}
		rkey := f.prefix + tenant + "\x00" + operation + "\x00" + key
		hash := hex.EncodeToString(fp[:])
		res, err := frontScript.Run(r.Context(), f.rdb, []string{rkey}, hash, f.lease.Milliseconds()).StringSlice()
		if err != nil {
			f.errors.Add(1) // PostgreSQL decides
		}
		if len(res) > 0 {
			switch res[0] {
			case "hit":
				if f.answerCached(w, res) {
					return
				}
			case "mismatch":
				web.WriteProblem(w, web.NewProblem(http.StatusUnprocessableEntity, idempotency.CodeKeyReused,
					"this idempotency key was used with a different request payload; use a new key for a new operation"))
				return
			}
		}
		tee := &teeWriter{ResponseWriter: w}
		inner.ServeHTTP(tee, r)
		f.fill(r.Context(), rkey, hash, tenant, operation, key, tee, start)
	})
}

// answerCached writes a cached response as the store replays one; false
// when the entry does not decode (then PostgreSQL answers).
func (f *redisFront) answerCached(w http.ResponseWriter, res []string) bool {
	var c cachedResponse
	if len(res) < 2 || json.Unmarshal([]byte(res[1]), &c) != nil {
		f.errors.Add(1)
		return false
	}
	for h, v := range c.Headers {
		w.Header()[h] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(c.Body)))
	w.Header().Set(idempotency.HeaderReplayed, "true")
	w.WriteHeader(c.Status)
	_, _ = w.Write(c.Body) // the client's connection; nothing to do on failure
	return true
}

// fill caches the response the store answered when it is a completed one:
// a 2xx/3xx the handler produced (the store answers those only after
// committing them) or a replay. Kept 4xx decisions are not visible from
// outside the store and are simply not cached. The entry must expire
// before the key does in PostgreSQL: a new claim's key expires at its
// claim time + ttl, which is after start + ttl; a replayed key's expiry
// is read from the store.
func (f *redisFront) fill(ctx context.Context, rkey, hash, tenant, operation, key string, tee *teeWriter, start time.Time) {
	replayed := tee.Header().Get(idempotency.HeaderReplayed) == "true"
	if tee.status < 200 || tee.status >= 400 || tee.overflow {
		return
	}
	ttl := f.ttl - time.Since(start)
	if replayed {
		rec, err := f.store.Lookup(ctx, tenant, operation, key)
		if err != nil {
			return // expired or released meanwhile: nothing to cache
		}
		ttl = time.Until(rec.ExpiresAt)
	}
	headers := http.Header{}
	for h, v := range tee.Header() {
		if h != idempotency.HeaderReplayed && h != "Content-Length" && h != "Date" {
			headers[h] = v
		}
	}
	enc, err := json.Marshal(cachedResponse{Status: tee.status, Headers: headers, Body: tee.body.Bytes()})
	if err != nil || ttl <= time.Second {
		return
	}
	if err := f.rdb.Set(ctx, rkey, "d"+hash+string(enc), ttl).Err(); err != nil {
		f.errors.Add(1) // the next replay reads PostgreSQL instead
		return
	}
	f.fills.Add(1)
}

// teeWriter passes a response through and keeps a copy of it.
type teeWriter struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	overflow bool
}

func (t *teeWriter) WriteHeader(code int) {
	if t.status == 0 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(b []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	if t.body.Len()+len(b) > maxCachedBody {
		t.overflow = true
	} else {
		t.body.Write(b)
	}
	return t.ResponseWriter.Write(b)
}

// redisAddr is where this kind of machine runs Redis.
const redisAddr = "127.0.0.1:6379"

// dialRedis returns a client, or an error saying why Redis is unusable.
func dialRedis(ctx context.Context) (*redis.Client, error) {
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr, PoolSize: 32})
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, errors.Join(fmt.Errorf("redis at %s: %w", redisAddr, err), rdb.Close())
	}
	return rdb, nil
}

// dropPrefix deletes this run's keys, in batches.
func dropPrefix(ctx context.Context, rdb *redis.Client, prefix string) error {
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := rdb.Unlink(ctx, batch...).Err()
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 1000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	return flush()
}
