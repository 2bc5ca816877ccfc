package idempotency_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
)

// TestClaimCommitsAsyncHandlerCommitsDurably: the claim commits with
// synchronous_commit off (its loss in a crash equals a release), so the
// handler's transaction, which carries the effect and the stored response,
// must run with it on, with and without a tenant quota.
func TestClaimCommitsAsyncHandlerCommitsDurably(t *testing.T) {
	pool := testsupport.Database(t)
	for name, quota := range map[string]int{"no-quota": 0, "quota": 100} {
		t.Run(name, func(t *testing.T) {
			store := idempotency.NewStore(pool, idempotency.Options{QuotaPerMinute: quota})
			var setting string
			h := store.Middleware("POST /v1/things", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tx, ok := idempotency.Tx(r.Context())
				require.True(t, ok)
				require.NoError(t, tx.QueryRow(r.Context(), "SHOW synchronous_commit").Scan(&setting))
				w.WriteHeader(http.StatusCreated)
			}))
			require.Equal(t, http.StatusCreated, postOnce(t, h, "durable-"+name))
			require.Equal(t, "on", setting, "the handler's commit must wait for its WAL flush")
			var state string
			require.NoError(t, pool.QueryRow(context.Background(), `SELECT state FROM idempotency_keys WHERE idempotency_key = $1`,
				"durable-"+name).Scan(&state))
			require.Equal(t, idempotency.StateCompleted, state)
		})
	}
}

// TestHandlerTxRefusedAfterTheRequest: the handler's transaction lives on
// a connection that returns to the pool when the request ends; a handler
// that kept it (a goroutine, a cache) must get an error, never run a
// statement on a connection another request now uses.
func TestHandlerTxRefusedAfterTheRequest(t *testing.T) {
	pool := testsupport.Database(t)
	store := idempotency.NewStore(pool, idempotency.Options{})
	var kept, sp pgx.Tx
	h := store.Middleware("POST /v1/things", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kept, _ = idempotency.Tx(r.Context())
		var err error
		sp, err = kept.Begin(r.Context())
		require.NoError(t, err)
		require.NoError(t, sp.Commit(r.Context()))
		w.WriteHeader(http.StatusNoContent)
	}))
	require.Equal(t, http.StatusNoContent, postOnce(t, h, "kept-1"))

	ctx := context.Background()
	_, err := kept.Exec(ctx, "SELECT 1")
	require.True(t, errors.Is(err, pgx.ErrTxClosed), "Exec after the request: %v", err)
	require.True(t, errors.Is(kept.QueryRow(ctx, "SELECT 1").Scan(new(int)), pgx.ErrTxClosed))
	_, err = kept.Begin(ctx)
	require.True(t, errors.Is(err, pgx.ErrTxClosed))
	_, err = sp.Exec(ctx, "SELECT 1")
	require.True(t, errors.Is(err, pgx.ErrTxClosed), "a savepoint after the request: %v", err)
	require.Nil(t, kept.Conn())
}

// postOnce serves h on a loopback port for one POST of "{}" with key and
// returns the status.
func postOnce(t *testing.T, h http.Handler, key string) int {
	srv := httptest.NewServer(web.BearerAuth(web.StaticTokens(map[string]string{"tok": "tenant"}), h))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(idempotency.HeaderKey, key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}
