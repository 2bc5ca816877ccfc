package web

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Default budget of failed authentications per client address: a burst of
// AuthFailureBurst, refilled at AuthFailuresPerMinute. A client with the
// right token never fails; one guessing is slowed to a crawl.
const (
	AuthFailuresPerMinute = 10
	AuthFailureBurst      = 10
)

// AuthLimiter limits failed authentications per client IP address. The
// client is the connection's peer; when the peer is a trusted proxy
// (Trust), it is the last address in X-Forwarded-For that is not one, so
// behind an ingress every client has a budget of its own and a header a
// client sets itself is never believed. Only failures spend the budget,
// and only failures are refused while it is spent: a valid credential is
// always served, whoever else failed from the same address.
type AuthLimiter struct {
	every   time.Duration
	burst   int
	now     func() time.Time
	trusted []netip.Prefix

	mu        sync.Mutex
	clients   map[string]*rate.Limiter
	lastSweep time.Time
}

// NewAuthLimiter allows burst failures per address, refilled at perMinute.
func NewAuthLimiter(perMinute, burst int) *AuthLimiter {
	return &AuthLimiter{every: time.Minute / time.Duration(perMinute), burst: burst, now: time.Now, clients: map[string]*rate.Limiter{}}
}

// Trust makes the limiter take the client's address from X-Forwarded-For
// when the connection comes from one of proxies (TRUSTED_PROXIES).
func (a *AuthLimiter) Trust(proxies []netip.Prefix) *AuthLimiter {
	a.trusted = proxies
	return a
}

// Client is the address r's budget is kept under: the peer, or behind
// trusted proxies the nearest address in X-Forwarded-For that is not a
// trusted proxy itself (all of them trusted: the first).
func (a *AuthLimiter) Client(r *http.Request) string {
	peer := peerIP(r)
	addr, err := netip.ParseAddr(peer)
	if err != nil || !a.isTrusted(addr) {
		return peer
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer // a hop a proxy of ours did not write: stop believing
		}
		if !a.isTrusted(hop.Unmap()) || i == 0 {
			return hop.Unmap().String()
		}
	}
	return peer
}

func (a *AuthLimiter) isTrusted(addr netip.Addr) bool {
	for _, p := range a.trusted {
		if p.Contains(addr.Unmap()) {
			return true
		}
	}
	return false
}

// peerIP is the address part of r.RemoteAddr: one client is one IP,
// whatever port each of its connections comes from.
func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Blocked reports whether r's address has spent its budget and, if so,
// how long until it may try again.
func (a *AuthLimiter) Blocked(r *http.Request) (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l, ok := a.clients[a.Client(r)]
	if !ok {
		return 0, false
	}
	now := a.now()
	if l.TokensAt(now) >= 1 {
		return 0, false
	}
	wait := l.ReserveN(now, 1)
	defer wait.CancelAt(now) // only asking: give the token back
	return wait.DelayFrom(now), true
}

// Failed spends one unit of r's address's budget.
func (a *AuthLimiter) Failed(r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	a.sweep(now)
	ip := a.Client(r)
	l, ok := a.clients[ip]
	if !ok {
		l = rate.NewLimiter(rate.Every(a.every), a.burst)
		a.clients[ip] = l
	}
	l.AllowN(now, 1)
}

// sweep forgets addresses whose budget is whole again, at most once a
// minute, so the map holds only recent offenders.
func (a *AuthLimiter) sweep(now time.Time) {
	if now.Sub(a.lastSweep) < time.Minute {
		return
	}
	a.lastSweep = now
	for ip, l := range a.clients {
		if l.TokensAt(now) >= float64(a.burst) {
			delete(a.clients, ip)
		}
	}
}

// RetryAfter sets the Retry-After header, in whole seconds (at least 1).
func RetryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Max(1, math.Ceil(d.Seconds())))))
}

// TooManyFailures answers 429 problem+json with Retry-After.
func TooManyFailures(w http.ResponseWriter, d time.Duration) {
	RetryAfter(w, d)
	WriteProblem(w, NewProblem(http.StatusTooManyRequests, "too_many_failed_authentications",
		"too many failed authentications from this address; wait for Retry-After seconds (a valid token is always served)"))
}
