package idempotency_test

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
)

// customerPhone is the personal data the demo responses quote.
const customerPhone = "+4915112345678"

// serveWith serves the demo API through another Store on the env's
// database: the same rows as a process configured with other keys sees.
func (e *env) serveWith(opts idempotency.Options) string {
	opts.Now = e.clock.Now
	store := idempotency.NewStore(e.pool, opts)
	mux := http.NewServeMux()
	for _, op := range []string{opCreate, opConfirm, opOther} {
		mux.Handle(op, store.Middleware(op, http.HandlerFunc(e.demo)))
	}
	srv := httptest.NewServer(web.BearerAuth(web.StaticTokens(tokens), mux))
	e.t.Cleanup(srv.Close)
	return srv.URL
}

// postVia sends the demo request as tenant A to /v1/holds at base.
func (e *env) postVia(base, key string) response {
	e.t.Helper()
	resp, err := send(context.Background(), e.http, base+"/v1/holds", "tok-a", key, "application/json",
		[]byte(`{"customer":"`+customerPhone+`"}`))
	require.NoError(e.t, err)
	return resp
}

// requireSameAnswer: the replay is the first answer, byte for byte.
func requireSameAnswer(t *testing.T, first, replay response) {
	t.Helper()
	require.True(t, replay.replayed)
	require.Equal(t, first.status, replay.status)
	require.Equal(t, first.body, replay.body)
	for _, h := range []string{"Content-Type", "Location", "Content-Length"} {
		require.Equal(t, first.header.Values(h), replay.header.Values(h), h)
	}
}

// requireNoPlaintext: no column of the key's row holds the number, in
// clear or hex-encoded (bytea's text form).
func (e *env) requireNoPlaintext(key string) {
	e.t.Helper()
	var row string
	var body, sealed []byte
	require.NoError(e.t, e.pool.QueryRow(context.Background(), `SELECT k::text, response_body, sealed
		FROM idempotency_keys k WHERE idempotency_key = $1`, key).Scan(&row, &body, &sealed))
	require.NotEmpty(e.t, sealed, "the response is sealed")
	require.Empty(e.t, body, "response_body holds nothing in clear")
	require.NotContains(e.t, string(sealed), customerPhone)
	require.NotContains(e.t, row, customerPhone)
	require.NotContains(e.t, row, hex.EncodeToString([]byte(customerPhone)))
}

// TestSealedResponseReplaysByteIdentical: with payload keys the stored
// response is ciphertext in PostgreSQL, and the replay (and the operation
// lookup) still give exactly the first answer.
func TestSealedResponseReplaysByteIdentical(t *testing.T) {
	e := newEnv(t, idempotency.Options{Sealer: testsupport.Sealer(t, testsupport.PayloadKey(t, "A"))})
	first := e.postVia(e.srv.URL, "k-sealed")
	require.Equal(t, http.StatusCreated, first.status)
	require.Contains(t, string(first.body), customerPhone, "the demo answer quotes the number")
	e.requireNoPlaintext("k-sealed")

	requireSameAnswer(t, first, e.postVia(e.srv.URL, "k-sealed"))
	rec, err := e.store.Lookup(context.Background(), "tenant-a", opCreate, "k-sealed")
	require.NoError(t, err)
	require.Equal(t, first.body, rec.Body)
	require.Equal(t, 1, e.effects(customerPhone))
}

// TestStoredResponseAcrossKeyChanges: a response stored with key A
// replays byte-identically after key B is added as current, and one
// stored in clear (before the keys were configured) replays once they
// are.
func TestStoredResponseAcrossKeyChanges(t *testing.T) {
	a, b := testsupport.PayloadKey(t, "A"), testsupport.PayloadKey(t, "B")
	tests := []struct {
		name          string
		before, after *payloadcrypt.Codec
	}{
		{"rotated: B added as current", testsupport.Sealer(t, a), testsupport.Sealer(t, b, a)},
		{"upgrade: clear row, keys configured", nil, testsupport.Sealer(t, a)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, idempotency.Options{Sealer: tt.before})
			first := e.postVia(e.srv.URL, "k1")
			require.Equal(t, http.StatusCreated, first.status)
			requireSameAnswer(t, first, e.postVia(e.serveWith(idempotency.Options{Sealer: tt.after}), "k1"))
			require.Equal(t, 1, e.effects(customerPhone))
		})
	}
}

// TestSealedResponseThatDoesNotOpenIsAnError: a tampered row, a response
// moved to another key's row, a key no longer configured and a process
// without keys all answer 500 with a problem that says why; never other
// bytes, never a second effect.
func TestSealedResponseThatDoesNotOpenIsAnError(t *testing.T) {
	a := testsupport.PayloadKey(t, "A")
	tests := []struct {
		name   string
		change string // SQL run on the stored rows
		keys   *payloadcrypt.Codec
	}{
		{"tampered", `UPDATE idempotency_keys SET sealed = set_byte(sealed, 40, (get_byte(sealed, 40) + 1) % 256) WHERE idempotency_key = 'k1'`, testsupport.Sealer(t, a)},
		{"moved from another row", `UPDATE idempotency_keys SET sealed = (SELECT sealed FROM idempotency_keys WHERE idempotency_key = 'k2') WHERE idempotency_key = 'k1'`, testsupport.Sealer(t, a)},
		{"key removed", "", testsupport.Sealer(t, testsupport.PayloadKey(t, "B"))},
		{"no keys", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, idempotency.Options{Sealer: testsupport.Sealer(t, a)})
			require.Equal(t, http.StatusCreated, e.postVia(e.srv.URL, "k1").status)
			require.Equal(t, http.StatusCreated, e.postVia(e.srv.URL, "k2").status)
			if tt.change != "" {
				_, err := e.pool.Exec(context.Background(), tt.change)
				require.NoError(t, err)
			}
			got := e.postVia(e.serveWith(idempotency.Options{Sealer: tt.keys}), "k1")
			require.Equal(t, http.StatusInternalServerError, got.status)
			require.Equal(t, idempotency.CodeInternal, problemCode(t, got))
			require.Contains(t, string(got.body), "cannot be decrypted")
			require.NotContains(t, string(got.body), customerPhone)
			require.Equal(t, 2, e.effects(customerPhone), "no second effect")
		})
	}
}
