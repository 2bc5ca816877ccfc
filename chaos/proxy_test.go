package chaos_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/chaos"
)

// seen is one request as the upstream received it.
type seen struct {
	Method, Path string
	Header       http.Header
	Body         string
}

// upstream is a loopback API that records every request it receives.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, seen{r.Method, r.URL.RequestURI(), r.Header.Clone(), string(body)})
		n := len(u.reqs)
		u.mu.Unlock()
		w.Header().Set("X-Upstream-Count", strconv.Itoa(n))
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) requests() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.reqs...)
}

// start puts a proxy with rules in front of up, seeded for determinism.
func start(t *testing.T, up *upstream, rules ...chaos.Rule) (*chaos.Proxy, string) {
	t.Helper()
	p, err := chaos.New(up.URL, rules, chaos.WithRand(rand.New(rand.NewPCG(1, 2))))
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// client returns a client with its own transport: a dropped answer on a
// reused connection would otherwise be retried silently by net/http (the
// request carries an Idempotency-Key), hiding the fault.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

const body = `{"service":"tire-change","customer":"c1"}`

func post(ctx context.Context, t *testing.T, c *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/holds?x=1", bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Idempotency-Key", "key-1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
	}
	return resp, err
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name     string
		rule     chaos.Rule
		wantErr  bool // the client gets no answer
		status   int
		upstream int
	}{
		{"none", chaos.Rule{Method: "GET", Fault: chaos.Reset, Probability: 1}, false, http.StatusCreated, 1},
		{"delay", chaos.Rule{Fault: chaos.Delay, Delay: 20 * time.Millisecond, Probability: 1}, false, http.StatusCreated, 1},
		{"drop after commit", chaos.Rule{Method: "POST", PathPrefix: "/v1/holds", Fault: chaos.DropAfterCommit, Probability: 1}, true, 0, 1},
		{"error after commit", chaos.Rule{Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 1}, false, http.StatusServiceUnavailable, 1},
		{"error after commit default", chaos.Rule{Fault: chaos.ErrorAfterCommit, Probability: 1}, false, http.StatusBadGateway, 1},
		{"reset", chaos.Rule{PathPrefix: "/v1/", Fault: chaos.Reset, Probability: 1}, true, 0, 0},
		{"duplicate", chaos.Rule{Fault: chaos.Duplicate, Probability: 1}, false, http.StatusCreated, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t)
			p, url := start(t, up, tt.rule)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			resp, err := post(ctx, t, client(t), url)
			if tt.wantErr {
				require.Error(t, err)
				require.NoError(t, ctx.Err(), "the failure must be the fault, not the deadline")
			} else {
				require.NoError(t, err)
				require.Equal(t, tt.status, resp.StatusCode)
			}

			reqs := up.requests()
			require.Len(t, reqs, tt.upstream)
			for _, r := range reqs {
				require.Equal(t, "POST", r.Method)
				require.Equal(t, "/v1/holds?x=1", r.Path)
				require.Equal(t, body, r.Body, "the full body reaches the upstream")
				require.Equal(t, "key-1", r.Header.Get("Idempotency-Key"))
			}
			if tt.upstream == 2 {
				require.Equal(t, reqs[0].Header, reqs[1].Header, "the duplicate is identical")
				require.Equal(t, "2", resp.Header.Get("X-Upstream-Count"), "the second answer is returned")
			}
			want := map[chaos.Fault]int{tt.rule.Fault: 1}
			if tt.name == "none" {
				want = map[chaos.Fault]int{}
			}
			require.Equal(t, want, p.Stats())
		})
	}
}

// TestDelayHoldsTheRequest shows the delay really happens without timing
// thresholds: a client whose deadline ends long before the delay gives up,
// and the proxy then does not forward at all.
func TestDelayHoldsTheRequest(t *testing.T) {
	up := newUpstream(t)
	_, url := start(t, up, chaos.Rule{Fault: chaos.Delay, Delay: time.Hour, Probability: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()

	_, err := post(ctx, t, client(t), url)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Empty(t, up.requests())
}

func TestProbabilityAndLimit(t *testing.T) {
	tests := []struct {
		name     string
		rule     chaos.Rule
		n        int
		min, max int
	}{
		{"p=0 never fires", chaos.Rule{Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 0}, 50, 0, 0},
		{"p=1 always fires", chaos.Rule{Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 1}, 20, 20, 20},
		{"p=0.5 about half", chaos.Rule{Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 0.5}, 200, 60, 140},
		{"limit=3 fires 3 times", chaos.Rule{Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 1, Limit: 3}, 10, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t)
			p, url := start(t, up, tt.rule)
			c := client(t)
			failed := 0
			for range tt.n {
				resp, err := post(t.Context(), t, c, url)
				require.NoError(t, err)
				if resp.StatusCode == http.StatusServiceUnavailable {
					failed++
				}
			}
			require.GreaterOrEqual(t, failed, tt.min)
			require.LessOrEqual(t, failed, tt.max)
			require.Equal(t, failed, p.Stats()[chaos.ErrorAfterCommit])
			require.Len(t, up.requests(), tt.n, "after-commit faults still forward")
		})
	}
}

func TestFirstFiringRuleWins(t *testing.T) {
	up := newUpstream(t)
	p, url := start(t, up,
		chaos.Rule{Method: "GET", Fault: chaos.Reset, Probability: 1},             // other method
		chaos.Rule{PathPrefix: "/v1/payment", Fault: chaos.Reset, Probability: 1}, // other path
		chaos.Rule{Fault: chaos.Reset, Probability: 0},                            // never fires
		chaos.Rule{Fault: chaos.ErrorAfterCommit, Status: 504, Probability: 1, Limit: 1},
		chaos.Rule{Fault: chaos.Duplicate, Probability: 1},
	)
	c := client(t)
	resp, err := post(t.Context(), t, c, url)
	require.NoError(t, err)
	require.Equal(t, http.StatusGatewayTimeout, resp.StatusCode)
	resp, err = post(t.Context(), t, c, url)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Equal(t, map[chaos.Fault]int{chaos.ErrorAfterCommit: 1, chaos.Duplicate: 1}, p.Stats())
	require.Len(t, up.requests(), 3)
}

func TestHopByHopHeadersAreNotForwarded(t *testing.T) {
	up := newUpstream(t)
	_, url := start(t, up)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/v1/x", nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "X-Hop")
	req.Header.Set("X-Hop", "1")
	req.Header.Set("Proxy-Authorization", "secret")
	req.Header.Set("X-End", "2")
	resp, err := client(t).Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	got := up.requests()[0].Header
	require.Empty(t, got.Get("X-Hop"))
	require.Empty(t, got.Get("Proxy-Authorization"))
	require.Equal(t, "2", got.Get("X-End"))
	require.Empty(t, up.requests()[0].Body)
}

func TestBodyOverLimitIsRejected(t *testing.T) {
	up := newUpstream(t)
	_, url := start(t, up)
	resp, err := client(t).Post(url+"/v1/x", "text/plain", bytes.NewReader(make([]byte, 1<<20+1)))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Empty(t, up.requests())
}

func TestNewRejectsBadRules(t *testing.T) {
	tests := []struct {
		name     string
		upstream string
		rule     chaos.Rule
		want     string
	}{
		{"unknown fault", "http://x", chaos.Rule{Fault: "explode", Probability: 1}, `unknown fault "explode"`},
		{"probability above 1", "http://x", chaos.Rule{Fault: chaos.Reset, Probability: 1.5}, "probability 1.5 outside 0..1"},
		{"negative probability", "http://x", chaos.Rule{Fault: chaos.Reset, Probability: -0.1}, "outside 0..1"},
		{"status not 5xx", "http://x", chaos.Rule{Fault: chaos.ErrorAfterCommit, Status: 404, Probability: 1}, "status 404 is not a 5xx"},
		{"delay missing", "http://x", chaos.Rule{Fault: chaos.Delay, Probability: 1}, "delay fault without a delay"},
		{"negative limit", "http://x", chaos.Rule{Fault: chaos.Reset, Probability: 1, Limit: -1}, "limit -1 is negative"},
		{"relative path", "http://x", chaos.Rule{PathPrefix: "v1", Fault: chaos.Reset, Probability: 1}, "does not start with /"},
		{"bad upstream", "localhost:8080", chaos.Rule{Fault: chaos.Reset, Probability: 1}, "not an absolute http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chaos.New(tt.upstream, []chaos.Rule{tt.rule})
			require.ErrorContains(t, err, tt.want)
		})
	}
}
