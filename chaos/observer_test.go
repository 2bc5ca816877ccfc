package chaos_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestObserverSeesEveryExchange: the observer gets the key, the body, the
// fault and what the upstream answered, also for an answer the client
// never received.
func TestObserverSeesEveryExchange(t *testing.T) {
	var committed int
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		committed++
		if r.Header.Get("Idempotency-Key") == "k-replayed" {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"hold_1"}`)
	}))
	t.Cleanup(upstream.Close)
	var (
		mu   sync.Mutex
		seen []chaos.Exchange
	)
	p, err := chaos.New(upstream.URL, []chaos.Rule{
		{Method: "POST", PathPrefix: "/v1/holds", Fault: chaos.DropAfterCommit, Probability: 1, Limit: 1},
	}, chaos.WithObserver(func(e chaos.Exchange) { mu.Lock(); seen = append(seen, e); mu.Unlock() }))
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)

	post := func(key string) (int, error) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/holds?x=1", strings.NewReader(`{"reference":"r1"}`))
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", key)
		// A fresh connection each time: Go's transport would otherwise
		// resend a keyed request on its own after the dropped answer.
		req.Close = true
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}
	_, err = post("k-dropped")
	require.Error(t, err, "the first answer is dropped")
	status, err := post("k-replayed")
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status)

	require.Equal(t, 2, committed)
	// The proxy reports an exchange after it has answered, so the client
	// can have its answer before the observer ran.
	testsupport.Eventually(t, 10*time.Second, "both exchanges observed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2)
	// The dropped exchange is reported when its connection has been cut,
	// which can be after the second exchange was: find each by its key.
	byKey := map[string]chaos.Exchange{}
	for _, e := range seen {
		byKey[e.IdempotencyKey] = e
	}
	dropped, replayed := byKey["k-dropped"], byKey["k-replayed"]
	require.Equal(t, chaos.Exchange{
		Method: "POST", Path: "/v1/holds", RawQuery: "x=1", IdempotencyKey: "k-dropped",
		Body: []byte(`{"reference":"r1"}`), Response: []byte(`{"id":"hold_1"}`),
		Fault: chaos.DropAfterCommit, UpstreamStatus: http.StatusCreated,
	}, dropped)
	require.True(t, dropped.Committed(), "committed upstream, unknown to the client")
	require.Equal(t, "k-replayed", replayed.IdempotencyKey)
	require.Equal(t, chaos.Fault(""), replayed.Fault)
	require.True(t, replayed.Replayed)
}
