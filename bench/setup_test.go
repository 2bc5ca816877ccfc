package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
)

// plainStore returns a Store whose Middleware runs the handler in a plain
// transaction without claiming or storing any key: the "without the
// idempotency layer" variant of item 1 (set in plain_hook_test.go).
var plainStore func(pool *pgxpool.Pool) *idempotency.Store

const (
	tenant  = config.DefaultTenant
	token   = config.DefaultAPIToken
	noopOp  = "POST /bench/noop"
	benchRs = 10 // resources added for item 1: 10 x 20 slots x 365 days
)

// ---- item 1: the calendar hold handler ---------------------------------

// calendarVariant is one way of serving POST /v1/holds.
type calendarVariant struct {
	name  string
	store func(pool *pgxpool.Pool) *idempotency.Store
}

func withMiddleware(quota int) func(pool *pgxpool.Pool) *idempotency.Store {
	return func(pool *pgxpool.Pool) *idempotency.Store {
		return idempotency.NewStore(pool, idempotency.Options{QuotaPerMinute: quota})
	}
}

// calendarServer serves the calendar API as internal/stack does, with the
// given idempotency store, on a loopback port.
func calendarServer(t testing.TB, cfg config.Config, pool *pgxpool.Pool, store *idempotency.Store) *httptest.Server {
	srv := &calendar.Server{
		Pool: pool, Idempotency: store, Tokens: web.StaticTokens(cfg.APITokens), Timezone: cfg.Timezone,
		HoldTTL: cfg.HoldTTL,
	}
	s := httptest.NewServer(srv.Handler())
	t.Cleanup(s.Close)
	return s
}

// seedResources adds benchRs resources open 08:00-18:00 every day, so
// that every op can book a slot of its own.
func seedResources(t testing.TB, pool *pgxpool.Pool) {
	_, err := pool.Exec(context.Background(), `INSERT INTO calendar_resources (tenant_id, id, name, kind, opens_at, closes_at, weekdays)
		SELECT $1, 'bench-' || lpad(g::text, 2, '0'), 'Bench ' || g, 'bay', '08:00', '18:00', '{1,2,3,4,5,6,7}'
		FROM generate_series(0, $2 - 1) g`, tenant, benchRs)
	require.NoError(t, err)
}

// slot returns the resource and start of the seq-th distinct slot: resource
// seq%benchRs, then 20 half-hour slots a day from 08:00, days from the day
// after tomorrow on.
func slot(tz *time.Location, base time.Time, seq int) (string, time.Time) {
	res := fmt.Sprintf("bench-%02d", seq%benchRs)
	j := seq / benchRs
	day, n := j/20, j%20
	start := time.Date(base.Year(), base.Month(), base.Day()+2+day, 8, 0, 0, 0, tz).Add(time.Duration(n) * 30 * time.Minute)
	return res, start
}

func newClient() *http.Client {
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
}

// holdOp books the seq-th slot through POST /v1/holds and expects 201.
func holdOp(c *http.Client, url string, tz *time.Location, prefix string) Op {
	base := time.Now().In(tz)
	return func(ctx context.Context, seq int) error {
		res, start := slot(tz, base, seq)
		body, _ := json.Marshal(calendar.HoldRequest{
			ResourceID: res, Service: "tire-change", Start: start,
			Customer: "cust-" + strconv.Itoa(seq), Reference: "bench-ref-" + strconv.Itoa(seq),
		})
		return post(ctx, c, url+"/v1/holds", prefix+strconv.Itoa(seq), body, http.StatusCreated)
	}
}

func post(ctx context.Context, c *http.Client, url, key string, body []byte, want int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(idempotency.HeaderKey, key)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: status %d, want %d: %s", url, resp.StatusCode, want, b)
	}
	return nil
}

// ---- item 2: the claim path and the database floor ---------------------

// noopHandler is a handler that writes nothing behind the middleware:
// each request is claim + complete and nothing else.
func noopHandler(store *idempotency.Store) http.Handler {
	noop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return web.BearerAuth(web.StaticTokens(map[string]string{token: tenant}), store.Middleware(noopOp, noop))
}

// noopServer serves noopHandler on a loopback port.
func noopServer(t testing.TB, store *idempotency.Store) *httptest.Server {
	s := httptest.NewServer(noopHandler(store))
	t.Cleanup(s.Close)
	return s
}

// inProcessOp calls h directly, without a socket or an HTTP client: what
// the store's claim + complete cost, comparable to the raw pgx loop.
func inProcessOp(h http.Handler, prefix string) Op {
	return func(ctx context.Context, seq int) error {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/bench/noop", strings.NewReader(`{"n":`+strconv.Itoa(seq)+`}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(idempotency.HeaderKey, prefix+strconv.Itoa(seq))
		w := &statusOnly{header: http.Header{}}
		h.ServeHTTP(w, req)
		if w.status != http.StatusNoContent {
			return fmt.Errorf("in-process noop: status %d", w.status)
		}
		return nil
	}
}

// statusOnly is a ResponseWriter that keeps the status and drops the body.
type statusOnly struct {
	header http.Header
	status int
}

func (w *statusOnly) Header() http.Header { return w.header }
func (w *statusOnly) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *statusOnly) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(b), nil
}

func noopOpFunc(c *http.Client, url, prefix string) Op {
	return func(ctx context.Context, seq int) error {
		return post(ctx, c, url+"/bench/noop", prefix+strconv.Itoa(seq), []byte(`{"n":`+strconv.Itoa(seq)+`}`), http.StatusNoContent)
	}
}

// rawClaim is the floor: the two statements any claim-then-complete scheme
// needs on this table, autocommitted, with pgx directly. With async, the
// INSERT commits asynchronously, the durability the store's claim has.
func rawClaim(pool *pgxpool.Pool, prefix string, async bool) Op {
	insert := rawInsert
	if async {
		insert += ` RETURNING set_config('synchronous_commit', 'off', true)`
	}
	return func(ctx context.Context, seq int) error {
		key := prefix + strconv.Itoa(seq)
		fp := sha256.Sum256([]byte(key))
		now := time.Now().UTC()
		owner := fmt.Sprintf("00000000-0000-4000-8000-%012d", seq)
		tag, err := pool.Exec(ctx, insert, tenant, noopOp, key, fp[:], owner, now.Add(30*time.Second), now, now.Add(72*time.Hour))
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("raw claim %s: key exists", key)
		}
		tag, err = pool.Exec(ctx, rawComplete, tenant, noopOp, key, owner, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("raw complete %s: no row", key)
		}
		return nil
	}
}

const rawComplete = `UPDATE idempotency_keys SET state = 'completed', status_code = 204,
		response_headers = '{}', response_body = '', completed_at = $5
	WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3 AND owner = $4 AND state = 'pending'`

const rawInsert = `INSERT INTO idempotency_keys
	(tenant_id, operation, idempotency_key, fingerprint, state, owner, locked_until, created_at, expires_at)
	VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8) ON CONFLICT DO NOTHING`

// ---- item 5: growth and the reaper --------------------------------------

// preloadKeys inserts n completed keys for operation, live or already
// expired, numbered from first on.
func preloadKeys(t testing.TB, pool *pgxpool.Pool, operation string, first, n int, expired bool) {
	ctx := context.Background()
	exp := "now() + interval '72 hours'"
	if expired {
		exp = "now() - interval '1 hour'"
	}
	// Batches of 100k keep each statement's memory and WAL burst modest.
	for lo := first; lo < first+n; lo += 100_000 {
		hi := min(lo+100_000, first+n) - 1
		_, err := pool.Exec(ctx, `INSERT INTO idempotency_keys
			(tenant_id, operation, idempotency_key, fingerprint, state, owner, locked_until, status_code,
			 response_headers, response_body, created_at, completed_at, expires_at)
			SELECT $1, $2, 'pre-' || g, sha256(g::text::bytea), 'completed', gen_random_uuid(), now(), 204,
			 '{}', '', now() - interval '1 minute', now(), `+exp+`
			FROM generate_series($3::int, $4::int) g`, tenant, operation, lo, hi)
		require.NoError(t, err)
	}
	_, err := pool.Exec(ctx, `ANALYZE idempotency_keys`)
	require.NoError(t, err)
}

func countRows(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// ---- environment ------------------------------------------------------

type env struct {
	cfg  config.Config
	pool *pgxpool.Pool
}

func newEnv(t *testing.T) env {
	cfg := testsupport.Config(t)
	return env{cfg: cfg, pool: testsupport.Database(t)}
}

// cpuTimes returns this process's CPU time and the CPU time of every
// process named postgres, by pid (the server is shared, so it includes
// other clients' work, if any).
func cpuTimes() (self time.Duration, pg map[string]time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return self, procCPU("postgres")
}

// procCPU returns the CPU time of every process named comm, by pid.
func procCPU(comm string) map[string]time.Duration {
	out := map[string]time.Duration{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		name, err := os.ReadFile(d + "/comm")
		if err != nil || strings.TrimSpace(string(name)) != comm {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if cpu, err := (proc{pid: pid}).cpu(); err == nil { // a process that has just ended is skipped
			out[d] = cpu
		}
	}
	return out
}

// pgDelta sums the CPU postgres processes used between two samples;
// processes that started meanwhile count from zero, ones that exited are
// lost (their work is small: the pool keeps its connections).
func pgDelta(before, after map[string]time.Duration) time.Duration {
	var d time.Duration
	for pid, t := range after {
		if t0 := before[pid]; t >= t0 {
			d += t - t0
		}
	}
	return d
}
