package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// maxBody bounds the buffered request body: the proxy must keep the body
// to send it twice (Duplicate), and an unbounded buffer would let one
// client exhaust the drill's memory.
const maxBody = 1 << 20

// maxAnswer bounds a buffered upstream answer (answers are read whole so
// the "after commit" faults fire only once the upstream has answered).
const maxAnswer = 16 << 20

// Proxy is a reverse proxy to one upstream that injects the faults of its
// rules. It is safe for concurrent use.
type Proxy struct {
	upstream  *url.URL
	rules     []Rule
	transport http.RoundTripper

	observe func(Exchange)

	mu    sync.Mutex // guards rng, fired and stats
	rng   *rand.Rand
	fired []int // per rule, for Limit
	stats map[Fault]int
}

// Option configures a Proxy.
type Option func(*Proxy)

// WithRand makes the probability draws come from r, so tests are
// deterministic with a fixed seed.
func WithRand(r *rand.Rand) Option { return func(p *Proxy) { p.rng = r } }

// WithTransport sets the round tripper used to reach the upstream (default:
// a private clone of http.DefaultTransport).
func WithTransport(rt http.RoundTripper) Option { return func(p *Proxy) { p.transport = rt } }

// WithObserver calls f once for every request the proxy handled, after it
// answered (or dropped) it. A drill uses it to tell retries that reused
// their operation's key from retries with a new one, and to follow each
// injected "unknown outcome" to how it ended. f must be safe for
// concurrent use.
func WithObserver(f func(Exchange)) Option { return func(p *Proxy) { p.observe = f } }

// Exchange is one request as the proxy saw it.
type Exchange struct {
	Method, Path, RawQuery string
	// IdempotencyKey is the request's Idempotency-Key header ("" if none).
	IdempotencyKey string
	// Body is the request body; Response the upstream's answer body
	// (also when the client never got it).
	Body, Response []byte
	// Fault is the fault injected ("" if none fired).
	Fault Fault
	// UpstreamStatus is the upstream's status (0: not forwarded or failed).
	UpstreamStatus int
	// Replayed is the upstream's Idempotent-Replayed answer header.
	Replayed bool
}

// Committed reports whether the upstream answered with a 2xx: for the
// "after commit" faults, the caller then holds an unknown outcome.
func (e Exchange) Committed() bool { return e.UpstreamStatus >= 200 && e.UpstreamStatus < 300 }

// New returns a proxy to upstream (an absolute http or https URL) that
// injects the faults of rules. Rules are checked first so that a typo in a
// drill fails loudly instead of silently injecting nothing.
func New(upstream string, rules []Rule, opts ...Option) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("chaos: upstream %q is not an absolute http(s) URL", upstream)
	}
	p := &Proxy{
		upstream:  u,
		rules:     make([]Rule, len(rules)),
		fired:     make([]int, len(rules)),
		stats:     map[Fault]int{},
		transport: http.DefaultTransport.(*http.Transport).Clone(),
		rng:       rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
	for i, r := range rules {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("chaos: rule %d (%s %s %s): %w", i, r.Method, r.PathPrefix, r.Fault, err)
		}
		p.rules[i] = r
	}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Stats reports how often each fault fired.
func (p *Proxy) Stats() map[Fault]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Fault]int, len(p.stats))
	for f, n := range p.stats {
		out[f] = n
	}
	return out
}

// pick returns the first matching rule whose draw fires, or nil. Only
// matching rules draw, so adding a rule for another path does not change
// which requests a seeded test hits.
func (p *Proxy) pick(r *http.Request) *Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.rules {
		rule := &p.rules[i]
		if rule.Method != "" && !strings.EqualFold(rule.Method, r.Method) {
			continue
		}
		if !strings.HasPrefix(r.URL.Path, rule.PathPrefix) {
			continue
		}
		if rule.Limit > 0 && p.fired[i] >= rule.Limit {
			continue
		}
		if p.rng.Float64() >= rule.Probability {
			continue
		}
		p.fired[i]++
		p.stats[rule.Fault]++
		return rule
	}
	return nil
}

// ServeHTTP forwards r to the upstream, injecting the fault of the first
// rule that fires.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rule := p.pick(r)
	var fault Fault
	if rule != nil {
		fault = rule.Fault
	}
	ex := &Exchange{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, IdempotencyKey: r.Header.Get("Idempotency-Key"), Fault: fault}
	if p.observe != nil {
		// Deferred, so that it also runs when abort panics to reset a stream.
		defer func() { p.observe(*ex) }()
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	ex.Body = body
	if fault == Reset {
		// The body was read (the client had sent it anyway) only so that
		// an observer can tell which operation was cut off.
		abort(w)
		return
	}
	if fault == Delay && !wait(r.Context(), rule.Delay) {
		return // the client gave up; forwarding now would be a surprise side effect
	}
	resp, err := p.forward(r, body, fault == Duplicate)
	if err != nil {
		http.Error(w, "chaos: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	reply(w, resp, rule, ex)
}

// readBody reads the request body, bounded by maxBody; on failure it
// answers the client and reports false.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "chaos: request body over 1 MiB", http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "chaos: read request body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// wait sleeps for d; it reports false if ctx ends first.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}

// forward sends r with body to the upstream; with duplicate it sends it
// twice and answers with the second response.
func (p *Proxy) forward(r *http.Request, body []byte, duplicate bool) (*http.Response, error) {
	if duplicate {
		first, err := p.roundTrip(r, body)
		if err != nil {
			return nil, err
		}
		// Drain so the upstream finishes the first answer (and the
		// connection can be reused) before the second request goes out.
		_, _ = io.Copy(io.Discard, first.Body)
		_ = first.Body.Close()
	}
	return p.roundTrip(r, body)
}

// reply records the upstream's answer in ex and passes it to the client,
// unless the rule's fault replaces it with a dropped connection or an
// error after the upstream committed.
func reply(w http.ResponseWriter, resp *http.Response, rule *Rule, ex *Exchange) {
	ex.UpstreamStatus, ex.Replayed = resp.StatusCode, resp.Header.Get("Idempotent-Replayed") == "true"
	// Read the whole answer before deciding: for the "after commit" faults
	// the upstream has committed once it sent it, which is their point.
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil || len(answer) > maxAnswer {
		abort(w) // a truncated answer would be a fault nobody asked for
		return
	}
	ex.Response = answer
	switch ex.Fault {
	case DropAfterCommit:
		abort(w)
		return
	case ErrorAfterCommit:
		http.Error(w, fmt.Sprintf("chaos: injected %d after commit", rule.Status), rule.Status)
		return
	}
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// roundTrip sends one copy of r with body to the upstream.
func (p *Proxy) roundTrip(r *http.Request, body []byte) (*http.Response, error) {
	u := *p.upstream
	u.Path = strings.TrimRight(u.Path, "/") + r.URL.Path
	u.RawPath = ""
	u.RawQuery = r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		out.Body = http.NoBody // no "Content-Length: 0" on GETs
	}
	copyHeader(out.Header, r.Header)
	if r.RemoteAddr != "" {
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			out.Header.Add("X-Forwarded-For", host)
		}
	}
	return p.transport.RoundTrip(out)
}

// abort closes the client connection without an answer. Hijacking gives a
// clean close on HTTP/1; ErrAbortHandler is the fallback that resets the
// stream where hijacking is impossible (HTTP/2).
func abort(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// hopByHop headers describe one connection, not the message, so a proxy
// must not forward them (RFC 9110 section 7.6.1).
var hopByHop = []string{
	"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// copyHeader copies src into dst without hop-by-hop headers, including the
// ones src's Connection header names.
func copyHeader(dst, src http.Header) {
	skip := map[string]bool{}
	for _, h := range hopByHop {
		skip[h] = true
	}
	for _, v := range src.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			skip[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
		}
	}
	for k, vs := range src {
		if !skip[http.CanonicalHeaderKey(k)] {
			dst[k] = append([]string(nil), vs...)
		}
	}
}
