package testsupport

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Proxy forwards to an upstream API and can pause one matching request,
// either before it reaches the upstream or after the upstream answered
// (committed) and before the answer goes back: the "response lost" and
// "worker died mid-call" cases of the failure matrix.
type Proxy struct {
	URL      string
	upstream string
	mu       sync.Mutex
	pauses   []*Pause
}

// Pause is one armed interception.
type Pause struct {
	method, prefix string
	after          bool
	used           bool
	reached        chan struct{}
	release        chan struct{}
	releaseOnce    sync.Once
	// Drop makes the paused request fail (connection closed) on release
	// instead of answering.
	Drop bool
	// Outage holds every later matching request too (before the upstream)
	// until Release: the endpoint is down, not one answer slow, so a retry
	// after the first attempt's timeout does not slip through on a loaded
	// machine.
	Outage bool
}

// Reached is closed when the matching request hit the pause point.
func (p *Pause) Reached() <-chan struct{} { return p.reached }

// Release lets the paused request continue; a second call does nothing,
// so a test may also release in its cleanup.
func (p *Pause) Release() { p.releaseOnce.Do(func() { close(p.release) }) }

// AwaitPause waits up to a minute for the request to reach p while the
// call that makes it runs; that call ending first (ended) fails the test.
// It releases p when the test ends, so a failed check never leaves the
// proxy (and the server's shutdown) waiting.
func AwaitPause(t testing.TB, p *Pause, ended <-chan error) {
	t.Helper()
	t.Cleanup(p.Release)
	select {
	case <-p.Reached():
	case err := <-ended:
		require.FailNow(t, "the call ended before its request reached the pause", "%v", err)
	case <-time.After(time.Minute):
		require.FailNow(t, "the request never reached the pause")
	}
}

// NewProxy starts a proxy to upstream on loopback.
func NewProxy(t testing.TB, upstream string) *Proxy {
	p := &Proxy{upstream: strings.TrimRight(upstream, "/")}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// PauseAt arms a pause for the next request with method and a path
// starting with prefix; afterUpstream pauses once the upstream answered.
func (p *Proxy) PauseAt(method, prefix string, afterUpstream bool) *Pause {
	pa := &Pause{method: method, prefix: prefix, after: afterUpstream, reached: make(chan struct{}), release: make(chan struct{})}
	p.mu.Lock()
	p.pauses = append(p.pauses, pa)
	p.mu.Unlock()
	return pa
}

// take returns the pause r meets, if any: the first matching request
// takes an armed pause; later ones meet it only while it is an Outage.
func (p *Proxy) take(r *http.Request) (pa *Pause, first bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pa := range p.pauses {
		if pa.method != r.Method || !strings.HasPrefix(r.URL.Path, pa.prefix) {
			continue
		}
		if !pa.used {
			pa.used = true
			return pa, true
		}
		if pa.Outage {
			return pa, false
		}
	}
	return nil, false
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	pa, first := p.take(r)
	if pa != nil && !first {
		select { // a retry during an outage: held, then forwarded
		case <-pa.release:
		case <-r.Context().Done():
			return
		}
		pa = nil
	}
	if pa != nil && !pa.after {
		close(pa.reached)
		<-pa.release
	}
	body, _ := io.ReadAll(r.Body)
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if pa != nil && pa.after {
		close(pa.reached)
		<-pa.release
	}
	if pa != nil && pa.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(out)
}
