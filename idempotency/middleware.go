package idempotency

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/internal/web"
)

// HeaderKey is the request header carrying the key; HeaderReplayed marks a
// replayed answer (the names Stripe and the IETF draft use).
const (
	HeaderKey      = "Idempotency-Key"
	HeaderReplayed = "Idempotent-Replayed"
)

// storedHeaders are the response headers kept with a key and replayed;
// the rest (Date, Content-Length, tracing) describe one transmission.
var storedHeaders = []string{"Content-Type", "Location", "Content-Language", "ETag"}

// Middleware wraps a mutating route. operation is the route pattern it is
// registered under, e.g. "POST /v1/holds"; the key's scope is tenant +
// operation + key, and the pattern's wildcards enter the fingerprint.
//
// For each request it validates the key, buffers the body, claims the key,
// then runs next inside a transaction (see Tx) and stores the response in
// that same transaction, so a response is replayed exactly when the effect
// it reports was committed. See the package documentation for the answers.
func (s *Store) Middleware(operation string, next http.Handler) http.Handler {
	if s.plain {
		return s.plainTx(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		tenant, ok := web.Tenant(r.Context())
		if !ok {
			// BearerAuth runs first; without a tenant there is no scope.
			s.problem(w, http.StatusUnauthorized, CodeUnauthorized, "no authenticated tenant")
			return
		}
		key, code, detail := validKey(r.Header.Values(HeaderKey))
		if code != "" {
			s.problem(w, http.StatusBadRequest, code, detail)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				s.problem(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
					"request body exceeds "+strconv.Itoa(MaxBodyBytes)+" bytes")
				return
			}
			s.problem(w, http.StatusBadRequest, CodeMalformedBody, "read request body: "+err.Error())
			return
		}
		fp, err := Fingerprint(r, operation, body)
		if err != nil {
			// Before the claim: a body we cannot canonicalise can have no
			// effect, so there is nothing to remember.
			s.problem(w, http.StatusBadRequest, CodeMalformedBody, "request body: "+err.Error())
			return
		}
		sc := scope{tenant: tenant, operation: operation, key: key}
		c, err := s.claim(r.Context(), sc, fp)
		if errors.Is(err, errUnreadable) {
			// Not transient: the key that sealed the response is gone, or
			// the row was tampered with. A retry gets the same answer.
			s.logFailure(r.Context(), "idempotency replay", operation, err)
			s.problem(w, http.StatusInternalServerError, CodeInternal,
				"the stored response of this idempotency key cannot be decrypted; an operator must restore its payload key")
			return
		}
		if err != nil {
			s.logFailure(r.Context(), "idempotency claim", operation, err)
			s.problem(w, http.StatusServiceUnavailable, CodeInternal, "idempotency store unavailable; retry with the same key")
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		s.answer(sw, r, sc, c, body, next)
		s.logEnvelope(r, sc, fp, c, sw.status, started)
	})
}

// answer acts on the claim decision.
func (s *Store) answer(w http.ResponseWriter, r *http.Request, sc scope, c claim, body []byte, next http.Handler) {
	m := s.metrics
	switch c.outcome {
	case replay:
		m.Replays.WithLabelValues(sc.tenant, sc.operation).Inc()
		m.blocked(sc.tenant, sc.operation)
		for _, h := range storedHeaders {
			if v := c.headers.Values(h); len(v) > 0 {
				w.Header()[h] = v
			}
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(c.body)))
		w.Header().Set(HeaderReplayed, "true")
		w.WriteHeader(c.status)
		_, _ = w.Write(c.body)
	case inFlight:
		m.InFlight.WithLabelValues(sc.tenant, sc.operation).Inc()
		m.blocked(sc.tenant, sc.operation)
		retryAfter(w, s.now(), c.until)
		s.problem(w, http.StatusConflict, CodeKeyInFlight,
			"a request with this idempotency key is still being processed; retry later with the same key")
	case mismatch:
		m.PayloadMismatch.WithLabelValues(sc.tenant, sc.operation).Inc()
		m.blocked(sc.tenant, sc.operation)
		s.problem(w, s.reusedStatus(), CodeKeyReused,
			"this idempotency key was used with a different request payload; use a new key for a new operation")
	case rateLimited:
		retryAfter(w, s.now(), c.until)
		s.problem(w, http.StatusTooManyRequests, CodeRateLimited, "too many new idempotency keys for this tenant this minute")
	case claimed:
		m.Claims.WithLabelValues(sc.tenant, sc.operation).Inc()
		if c.takeover {
			m.LeaseTakeovers.WithLabelValues(sc.tenant, sc.operation).Inc()
		}
		s.run(w, r, sc, c, body, next)
	}
}

// run executes the handler in its transaction (begun by the claim) and
// stores its decision.
func (s *Store) run(w http.ResponseWriter, r *http.Request, sc scope, c claim, body []byte, next http.Handler) {
	// The handler is detached from the client: a client that times out must
	// not cancel work that may already be committing (a timeout is an
	// unknown, the retry then replays). It is bounded by the lease instead,
	// because after the lease a takeover fences this holder anyway.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.lease)
	defer cancel()
	sess, owner := c.sess, c.owner
	finished := false
	defer func() {
		if finished {
			return
		}
		// The handler panicked: nothing it did may persist, and the key is
		// released so the retry runs. The panic continues to the server.
		sess.rollback(context.WithoutCancel(ctx))
		s.release(sc, owner)
	}()

	st := &requestState{tx: handlerTx{sess}}
	rec := web.NewRecorder()
	req := r.WithContext(context.WithValue(ctx, ctxKey{}, st))
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	next.ServeHTTP(rec, req)
	finished = true

	keep, resType, resID := st.snapshot()
	status := rec.Status()
	if status >= 500 || (status >= 400 && !keep) {
		// Not a decision: undo the effect and free the key for a corrected
		// or later retry.
		sess.rollback(ctx)
		s.release(sc, owner)
		rec.Flush(w)
		return
	}
	if err := s.complete(ctx, sess, sc, owner, rec, resType, resID); err != nil {
		if errors.Is(err, errFenced) {
			s.metrics.InFlight.WithLabelValues(sc.tenant, sc.operation).Inc()
			s.metrics.blocked(sc.tenant, sc.operation)
			retryAfter(w, s.now(), s.now().Add(time.Second))
			s.problem(w, http.StatusConflict, CodeKeyInFlight,
				"this request outlived its lease and another request took the key over; retry with the same key")
			return
		}
		// The commit may or may not have landed; release only deletes a
		// row that is still pending and ours, so either way the retry is
		// right: it replays or it runs.
		s.release(sc, owner)
		s.logFailure(ctx, "idempotency complete", sc.operation, err)
		s.problem(w, http.StatusInternalServerError, CodeInternal, "storing the result failed; retry with the same key")
		return
	}
	rec.Flush(w)
}

// errUnreadable says that a completed key's stored response does not
// open (payloadcrypt: unknown key, no keys, tampered or moved).
var errUnreadable = errors.New("idempotency: stored response unreadable")

// errFenced says that another request took our key over.
var errFenced = errors.New("idempotency: lease lost to another request")

// fenceMarker names the error completeSQL raises when the key is no
// longer ours.
const fenceMarker = "idempotency lease lost"

// completeSQL stores the response. The owner condition is the fence: a
// holder whose lease was taken over finds no row, and then the statement
// raises fenceMarker, which aborts the transaction, so that the COMMIT
// sent with it does not commit the handler's effect.
const completeSQL = `WITH done AS (UPDATE idempotency_keys SET state = 'completed', status_code = $5,
		response_headers = $6, response_body = $7, resource_type = NULLIF($8, ''),
		resource_id = NULLIF($9, ''), completed_at = $10, sealed = $11
	WHERE tenant_id = $1 AND operation = $2 AND idempotency_key = $3 AND owner = $4 AND state = 'pending'
	RETURNING 1)
	SELECT CASE WHEN count(*) = 1 THEN 1 ELSE ('` + fenceMarker + ` ' || count(*))::int END FROM done`

// complete stores the response in the handler's transaction and commits,
// in one round trip; a fenced holder's effect is rolled back.
func (s *Store) complete(ctx context.Context, sess *session, sc scope, owner [16]byte, rec *web.Recorder, resType, resID string) error {
	headers := map[string][]string{}
	for _, h := range storedHeaders {
		if v := rec.Header().Values(h); len(v) > 0 {
			headers[h] = v
		}
	}
	hj, err := json.Marshal(headers)
	if err != nil {
		sess.rollback(ctx)
		return err
	}
	body := rec.Body()
	if body == nil {
		body = []byte{} // NOT NULL for completed rows; empty is a valid answer
	}
	plain, sealed := s.sealBody(sc, body)
	err = sess.finish(ctx, completeSQL, sc.tenant, sc.operation, sc.key, owner, rec.Status(), hj, plain, resType, resID, s.now(), sealed)
	if raised(err, fenceMarker) {
		return errFenced
	}
	return err
}

// validKey returns the key or a problem code. The draft allows any sf-string;
// we are stricter: 1-255 bytes of printable ASCII without spaces, so a key
// survives logs, URLs (GET /v1/operations/{key}) and proxies unchanged.
func validKey(values []string) (key, code, detail string) {
	switch {
	case len(values) == 0:
		return "", CodeKeyMissing, "send an Idempotency-Key header on every mutating request"
	case len(values) > 1:
		return "", CodeKeyInvalid, "send exactly one Idempotency-Key header"
	}
	key = values[0]
	if key == "" {
		return "", CodeKeyMissing, "the Idempotency-Key header is empty"
	}
	if len(key) > MaxKeyLength {
		return "", CodeKeyInvalid, "the Idempotency-Key is longer than 255 bytes"
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return "", CodeKeyInvalid, "the Idempotency-Key must be printable ASCII without spaces"
		}
	}
	return key, "", ""
}

// plainTx runs next in a transaction with the middleware's commit rules but
// no key: Options.PlainTransaction, the benchmark baseline. It costs what
// a handler's own transaction costs: BEGIN, the handler, COMMIT.
func (s *Store) plainTx(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		sess, err := openSession(ctx, s.pool, func(*pgx.Batch) {}, func(pgx.BatchResults) error { return nil })
		if err != nil {
			s.problem(w, http.StatusServiceUnavailable, CodeInternal, "begin transaction failed")
			return
		}
		defer sess.rollback(context.WithoutCancel(ctx)) // a no-op after finish
		st := &requestState{tx: handlerTx{sess}}
		rec := web.NewRecorder()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(ctx, ctxKey{}, st)))
		keep, _, _ := st.snapshot()
		if status := rec.Status(); status < 400 || (status < 500 && keep) {
			if err := sess.finish(ctx, ""); err != nil {
				s.problem(w, http.StatusInternalServerError, CodeInternal, "commit failed")
				return
			}
		}
		rec.Flush(w)
	})
}
