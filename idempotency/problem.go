package idempotency

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/bookonce/bookonce/internal/web"
)

// Problem codes the middleware answers with. They are stable: clients
// switch on them (calendar.Client treats idempotency_key_in_flight as
// retryable).
const (
	CodeKeyMissing    = "idempotency_key_missing"
	CodeKeyInvalid    = "idempotency_key_invalid"
	CodeKeyReused     = "idempotency_key_reused"
	CodeKeyInFlight   = "idempotency_key_in_flight"
	CodeMalformedBody = "malformed_body"
	CodeBodyTooLarge  = "payload_too_large"
	CodeRateLimited   = "rate_limited"
	CodeUnauthorized  = "unauthenticated"
	CodeInternal      = "internal"
)

// stripeTypes maps codes to Stripe error types. Key problems are
// idempotency_error (what Stripe itself sends); request problems are
// invalid_request_error; our own failures are api_error.
var stripeTypes = map[string]string{
	CodeKeyMissing:    "idempotency_error",
	CodeKeyInvalid:    "idempotency_error",
	CodeKeyReused:     "idempotency_error",
	CodeKeyInFlight:   "idempotency_error",
	CodeMalformedBody: "invalid_request_error",
	CodeBodyTooLarge:  "invalid_request_error",
	CodeRateLimited:   "invalid_request_error",
	CodeUnauthorized:  "invalid_request_error",
	CodeInternal:      "api_error",
}

// stripeCodes are the codes Stripe itself sends where ours differ: a key
// whose first request is still running is idempotency_key_in_use (409),
// a quota met is rate_limit (429); stripe-go names both, and a client
// switching on them must find them here as at Stripe.
var stripeCodes = map[string]string{
	CodeKeyInFlight: "idempotency_key_in_use",
	CodeRateLimited: "rate_limit",
}

// reusedStatus is the status of a key reused with another payload: 422 in
// the problem+json style (RFC 9110: the request is well-formed but cannot
// be processed), 400 in Stripe's, because Stripe answers 400 and a client
// written against Stripe must see the same status here.
func (s *Store) reusedStatus() int {
	if s.style == StripeJSON {
		return http.StatusBadRequest
	}
	return http.StatusUnprocessableEntity
}

// problem writes an error answer in the store's style.
func (s *Store) problem(w http.ResponseWriter, status int, code, detail string) {
	if s.style != StripeJSON {
		web.WriteProblem(w, web.NewProblem(status, code, detail))
		return
	}
	typ := stripeTypes[code]
	if typ == "" {
		typ = "api_error"
	}
	var doc struct {
		Error struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if c, ok := stripeCodes[code]; ok {
		code = c
	}
	doc.Error.Type, doc.Error.Code, doc.Error.Message = typ, code, detail
	body, _ := json.Marshal(doc) // three strings cannot fail to encode
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// retryAfter sets Retry-After to the whole seconds until t, at least 1, so
// a client never busy-loops on "0".
func retryAfter(w http.ResponseWriter, now, t time.Time) {
	secs := int((t.Sub(now) + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
}
