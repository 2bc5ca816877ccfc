package idempotency

import (
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"time"
)

// String names a claim outcome for the log envelope.
func (o outcome) String() string {
	switch o {
	case claimed:
		return "claimed"
	case replay:
		return "replayed"
	case inFlight:
		return "in_flight"
	case mismatch:
		return "payload_mismatch"
	case rateLimited:
		return "rate_limited"
	}
	return "unknown"
}

// statusWriter remembers the status a request was answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// logEnvelope writes the one line per keyed request the seeds ask for:
// tenant, operation, key, fingerprint, state, replayed, status, duration.
// Keys and fingerprints are not secrets; bodies are never logged (they
// carry phone numbers).
func (s *Store) logEnvelope(r *http.Request, sc scope, fp [32]byte, c claim, status int, started time.Time) {
	if s.log == nil {
		return
	}
	level := slog.LevelInfo
	if c.outcome != claimed {
		level = slog.LevelWarn // a duplicate was blocked: the early warning
	}
	s.log.Log(r.Context(), level, "idempotency",
		"tenant", sc.tenant, "operation", sc.operation, "key", sc.key,
		"fingerprint", hex.EncodeToString(fp[:6]), "state", c.outcome.String(),
		"replayed", c.outcome == replay, "takeover", c.takeover, "status", status,
		"duration_ms", float64(time.Since(started).Microseconds())/1000)
}

// logFailure logs a store failure on the service's logger. A request whose
// client hung up (context canceled) is not a failure of the store: it is
// logged at info, so the error level stays meaningful for alerting.
func (s *Store) logFailure(ctx context.Context, msg, operation string, err error) {
	log := s.log
	if log == nil {
		log = slog.Default()
	}
	level := slog.LevelError
	if errors.Is(err, context.Canceled) {
		level, msg = slog.LevelInfo, msg+" (client went away)"
	}
	log.Log(ctx, level, msg, "operation", operation, "err", err)
}
