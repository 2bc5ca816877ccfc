package idempotency_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
)

// Operations of the demo API.
const (
	opCreate  = "POST /v1/holds"
	opConfirm = "POST /v1/holds/{id}/confirm"
	opOther   = "POST /v1/other"
)

var tokens = map[string]string{"tok-a": "tenant-a", "tok-b": "tenant-b"}

// fakeClock is an injectable Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 12, 1, 14, 0, 10, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is a demo API behind the middleware on a real loopback server and a
// fresh PostgreSQL database.
type env struct {
	t     *testing.T
	pool  *pgxpool.Pool
	store *idempotency.Store
	reg   *prometheus.Registry
	clock *fakeClock
	srv   *httptest.Server
	http  *http.Client
	// hooks run inside the handler after its effect, by customer name; a
	// test blocks a request there.
	hooks sync.Map
}

// newEnv starts the demo API; opts.Now and opts.Registerer are filled in.
func newEnv(t *testing.T, opts idempotency.Options) *env {
	t.Helper()
	e := &env{t: t, pool: testsupport.Database(t), reg: prometheus.NewRegistry(), clock: newClock()}
	_, err := e.pool.Exec(context.Background(), `CREATE TABLE demo_effects (
		id bigserial PRIMARY KEY, tenant text NOT NULL, customer text NOT NULL, hold text NOT NULL DEFAULT '')`)
	require.NoError(t, err)
	if opts.Now == nil {
		opts.Now = e.clock.Now
	}
	opts.Registerer = e.reg
	e.store = idempotency.NewStore(e.pool, opts)
	mux := http.NewServeMux()
	for _, op := range []string{opCreate, opConfirm, opOther} {
		mux.Handle(op, e.store.Middleware(op, http.HandlerFunc(e.demo)))
	}
	e.srv = httptest.NewUnstartedServer(web.BearerAuth(web.StaticTokens(tokens), mux))
	// The panic test panics on purpose; keep its stack out of the output.
	e.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	e.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	t.Cleanup(e.http.CloseIdleConnections)
	return e
}

// demoRequest is the demo body. Mode selects the handler's answer.
type demoRequest struct {
	Customer string `json:"customer"`
	Mode     string `json:"mode,omitempty"`
}

// demo inserts one row through idempotency.Tx and answers 201 with its id
// and a nanosecond timestamp, so two first answers never share bytes.
func (e *env) demo(w http.ResponseWriter, r *http.Request) {
	var in demoRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", err.Error()))
		return
	}
	ctx := r.Context()
	tx, ok := idempotency.Tx(ctx)
	if !ok {
		web.WriteProblem(w, web.NewProblem(http.StatusInternalServerError, "internal", "no transaction"))
		return
	}
	if in.Mode == "slot_unavailable" {
		// A decided business outcome: stored and replayed.
		idempotency.Keep(ctx)
		web.WriteProblem(w, web.NewProblem(http.StatusConflict, "slot_unavailable", "taken at "+time.Now().Format(time.RFC3339Nano)))
		return
	}
	tenant, _ := web.Tenant(ctx)
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO demo_effects (tenant, customer, hold) VALUES ($1, $2, $3) RETURNING id`,
		tenant, in.Customer, r.PathValue("id")).Scan(&id); err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusInternalServerError, "internal", err.Error()))
		return
	}
	idempotency.SetResource(ctx, "demo", fmt.Sprint(id))
	if hook, ok := e.hooks.Load(in.Customer); ok {
		hook.(func())()
	}
	switch in.Mode {
	case "invalid":
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", "customer rejected"))
		return
	case "fail":
		web.WriteProblem(w, web.NewProblem(http.StatusInternalServerError, "internal", "boom"))
		return
	case "panic":
		panic("demo handler panics")
	}
	w.Header().Set("Location", fmt.Sprintf("/v1/demo/%d", id))
	web.WriteJSON(w, http.StatusCreated, map[string]any{"id": id, "customer": in.Customer, "at": time.Now().Format(time.RFC3339Nano)})
}

// response is what a client saw.
type response struct {
	status   int
	header   http.Header
	body     []byte
	replayed bool
}

// call sends a request: path, token, key ("" = no header) and raw body.
func (e *env) call(ctx context.Context, path, token, key string, body []byte) (response, error) {
	return send(ctx, e.http, e.srv.URL+path, token, key, "application/json", body)
}

// send POSTs body to url with a bearer token and an Idempotency-Key
// ("" = no header), to the demo API or to a real one.
func send(ctx context.Context, hc *http.Client, url, token, key, contentType string, body []byte) (response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", contentType)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}, nil
}

// post sends a JSON body as tenant A to /v1/holds and requires transport
// success.
func (e *env) post(key string, body any) response {
	e.t.Helper()
	return e.postTo("/v1/holds", "tok-a", key, body)
}

func (e *env) postTo(path, token, key string, body any) response {
	e.t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(e.t, err)
	}
	resp, err := e.call(context.Background(), path, token, key, raw)
	require.NoError(e.t, err)
	return resp
}

// effects counts demo rows, optionally for one customer.
func (e *env) effects(customer string) int {
	e.t.Helper()
	var n int
	err := e.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM demo_effects WHERE $1 = '' OR customer = $1`, customer).Scan(&n)
	require.NoError(e.t, err)
	return n
}

// keyRows counts idempotency_keys rows.
func (e *env) keyRows() int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM idempotency_keys`).Scan(&n))
	return n
}

// problemCode decodes the code of a problem document, or of a
// Stripe-shaped error (the payment API's style).
func problemCode(t *testing.T, r response) string {
	t.Helper()
	var p struct {
		Code  string `json:"code"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &p), "body %s", r.body)
	if p.Code == "" {
		return p.Error.Code
	}
	return p.Code
}

// waitCompleted waits until the key's row is completed.
func (e *env) waitCompleted(tenant, op, key string) idempotency.Record {
	e.t.Helper()
	var rec idempotency.Record
	require.Eventually(e.t, func() bool {
		r, err := e.store.Lookup(context.Background(), tenant, op, key)
		rec = r
		return err == nil && r.State == idempotency.StateCompleted
	}, 10*time.Second, 5*time.Millisecond)
	return rec
}
