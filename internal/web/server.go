package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/bookonce/bookonce/internal/tracing"
)

// Health reports whether a service can serve; nil means healthy.
type Health func(ctx context.Context) error

// Service is one HTTP service: its routes plus /healthz and /metrics.
type Service struct {
	Name     string
	Handler  http.Handler
	Health   Health
	Gatherer prometheus.Gatherer
	Logger   *slog.Logger
	// Public marks a listener the internet reaches (the gateway's, which
	// Twilio and the payment provider call; the agent tools'; the payment
	// API's, whose hosted page customers' browsers open; the calendar
	// API's, which a shop's front desk may call across the internet): no
	// /metrics, and a /healthz that says only ok or unhealthy, never why
	// (the error names hosts and databases), from a check made at most
	// once per HealthEvery however many ask; the admin listener serves
	// both in full.
	Public bool
	// HealthEvery bounds how often a Public /healthz checks (zero: once a
	// second), so anonymous requests cannot drain the database pool.
	HealthEvery time.Duration
}

// Mux returns the service's routes with /healthz and /metrics mounted
// (/metrics only when the service is not Public), traced when tracing is
// on (a server span per request, joining the caller's trace unless the
// service is Public).
func (s Service) Mux() http.Handler {
	return tracing.Handler(s.Name, s.Public, s.mux())
}

func (s Service) mux() http.Handler {
	mux := http.NewServeMux()
	health := s.Health
	if s.Public && health != nil {
		every := s.HealthEvery
		if every <= 0 {
			every = time.Second
		}
		health = (&sharedHealth{check: health, every: every}).Check
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if health != nil {
			if err := health(ctx); err != nil {
				body := map[string]string{"status": "unhealthy", "service": s.Name, "error": err.Error()}
				if s.Public {
					body = map[string]string{"status": "unhealthy"}
					s.log().Warn("unhealthy", "service", s.Name, "err", err)
				}
				WriteJSON(w, http.StatusServiceUnavailable, body)
				return
			}
		}
		if s.Public {
			WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
			return
		}
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok", "service": s.Name})
	})
	if s.Handler != nil {
		mux.Handle("/", s.Handler)
	}
	if s.Public {
		return mux
	}
	g := s.Gatherer
	if g == nil {
		g = prometheus.DefaultGatherer
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	return mux
}

// sharedHealth runs check at most once per every; callers in between,
// and those waiting while it runs, get its last answer.
type sharedHealth struct {
	check Health
	every time.Duration

	mu   sync.Mutex
	at   time.Time
	last error
}

// Check answers the last check's result, checking again once it is older
// than every.
func (h *sharedHealth) Check(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.at.IsZero() && time.Since(h.at) < h.every {
		return h.last
	}
	h.last, h.at = h.check(ctx), time.Now()
	return h.last
}

func (s Service) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Listen binds addr, so a caller learns of a taken port before it reports
// the service as up.
func Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l, nil
}

// Limits of every bookonce HTTP server (NewServer), so a slow or
// malicious client cannot hold a connection or memory for ever. Requests
// are small JSON documents, forms and webhooks, so reading is quick; the
// write timeout is generous because the longest answers (the ops page,
// which scrapes the other processes' /metrics, and /metrics itself) take
// seconds, never minutes.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 2 * time.Minute
	IdleTimeout       = 2 * time.Minute
	MaxHeaderBytes    = 64 << 10
)

// NewServer is the http.Server every bookonce process serves h with: the
// timeouts and header limit above.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// Serve runs the service on l until ctx ends, then drains requests for up
// to ten seconds.
func (s Service) Serve(ctx context.Context, l net.Listener) error {
	srv := s.server(ctx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %w", s.Name, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s shutdown: %w", s.Name, err)
	}
	return nil
}

// server is the service's http.Server; requests' contexts outlive ctx so
// that Shutdown can drain them.
func (s Service) server(ctx context.Context) *http.Server {
	srv := NewServer(s.Mux())
	srv.BaseContext = func(net.Listener) context.Context { return context.WithoutCancel(ctx) }
	return srv
}
