package testsupport

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Outage is a loopback server in front of an upstream API that can be
// down: while down it closes every connection without an answer (a
// crashed API, a partition), so callers see transport errors, the unknown
// outcome. It goes down by itself at a trigger request, before forwarding
// it or after the upstream committed it (the answer is then lost too),
// and stays down until Up. Tests end an outage on an effect they can
// observe (how many requests it refused), never on the clock.
type Outage struct {
	URL      string
	upstream string
	mu       sync.Mutex
	trigger  func(*http.Request) bool
	after    bool
	down     bool
	refused  int
	wentDown chan struct{}
}

// NewOutage starts an outage proxy to upstream on loopback; it is up.
func NewOutage(t testing.TB, upstream string) *Outage {
	o := &Outage{upstream: strings.TrimRight(upstream, "/"), wentDown: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(srv.Close)
	o.URL = srv.URL
	return o
}

// DownAt arms the outage for the first request trigger matches;
// afterCommit lets that request reach the upstream and loses its answer.
func (o *Outage) DownAt(trigger func(*http.Request) bool, afterCommit bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.trigger, o.after = trigger, afterCommit
}

// WentDown is closed once the outage has begun.
func (o *Outage) WentDown() <-chan struct{} { return o.wentDown }

// Up ends the outage: requests are forwarded again.
func (o *Outage) Up() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = false
}

// Refused is how many requests the outage turned away.
func (o *Outage) Refused() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refused
}

// admit decides what happens to r: refused (down), triggering (the
// request that begins the outage, and whether it is forwarded first), or
// forwarded.
func (o *Outage) admit(r *http.Request) (refuse, trigger, forwardFirst bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down {
		o.refused++
		return true, false, false
	}
	if o.trigger != nil && o.trigger(r) {
		o.trigger, o.down = nil, true
		close(o.wentDown)
		return false, true, o.after
	}
	return false, false, false
}

func (o *Outage) serve(w http.ResponseWriter, r *http.Request) {
	refuse, trigger, forwardFirst := o.admit(r)
	if refuse || (trigger && !forwardFirst) {
		hangUp(w)
		return
	}
	status, header, body, err := forward(r, o.upstream)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if trigger { // committed upstream; the answer is lost with the outage
		hangUp(w)
		return
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// forward sends r to upstream and reads the whole answer.
func forward(r *http.Request, upstream string) (int, http.Header, []byte, error) {
	in, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), bytes.NewReader(in))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out, err
}

// hangUp closes the client connection without an answer.
func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
