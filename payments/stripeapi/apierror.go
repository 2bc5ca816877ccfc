package stripeapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/payments"
)

// Stripe error types the API answers with.
const (
	typeInvalidRequest = "invalid_request_error"
	typeCard           = "card_error"
	typeAPI            = "api_error"
)

// Error codes of the idempotency layer (payments holds Stripe's own).
const (
	CodeIdempotencyKeyInFlight = idempotency.CodeKeyInFlight
	CodeIdempotencyKeyReused   = idempotency.CodeKeyReused
)

// apiError is a Stripe error document: {"error": {...}} with the HTTP
// status Stripe uses for it.
type apiError struct {
	status        int
	keep          bool          // a decided outcome: stored with the key and replayed
	Type          string        `json:"type"`
	Code          string        `json:"code,omitempty"`
	DeclineCode   string        `json:"decline_code,omitempty"`
	Message       string        `json:"message"`
	Param         string        `json:"param,omitempty"`
	Charge        string        `json:"charge,omitempty"`
	PaymentIntent *intentObject `json:"payment_intent,omitempty"`
}

func (e *apiError) Error() string { return e.Type + ": " + e.Code + ": " + e.Message }

func invalidRequest(param, code, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, Type: typeInvalidRequest, Code: code, Param: param, Message: msg}
}

func unknownParam(param string) *apiError {
	return invalidRequest(param, payments.CodeParameterUnknown, "Received unknown parameter: "+param)
}

func missingParam(param string) *apiError {
	return invalidRequest(param, payments.CodeParameterMissing, "Missing required param: "+param+".")
}

// noSuchIntent is Stripe's answer for an unknown ID: 404 when the ID is in
// the path, 400 when it is a parameter.
func noSuchIntent(status int, param, id string) *apiError {
	return &apiError{status: status, Type: typeInvalidRequest, Code: payments.CodeResourceMissing, Param: param,
		Message: "No such payment_intent: '" + id + "'"}
}

// unexpectedState is Stripe's payment_intent_unexpected_state. It carries
// the intent as it is now, which lets a caller treat "already canceled" on
// a void as done without another round trip. It is a decided outcome.
func unexpectedState(pi *intentObject, action, allowed string) *apiError {
	return &apiError{
		status: http.StatusBadRequest, keep: true, Type: typeInvalidRequest, Code: payments.CodeUnexpectedState,
		Message: "This PaymentIntent's " + action + " could not be performed because it has a status of " + pi.Status +
			". Only a PaymentIntent with one of the following statuses may be " + allowed + ".",
		PaymentIntent: pi,
	}
}

// writeJSON writes v as Stripe writes it: application/json with an exact
// length, so a stored answer replays byte for byte.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"type":"api_error","message":"encode response"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError writes e; a decided outcome is marked to be kept, anything
// else makes the middleware roll back and release the key.
func writeError(ctx context.Context, w http.ResponseWriter, e *apiError) {
	if e.keep {
		idempotency.Keep(ctx)
	}
	writeJSON(w, e.status, struct {
		Error *apiError `json:"error"`
	}{e})
}

// internalError answers 500 api_error; nothing is stored, the transaction
// is rolled back and a retry with the same key runs again.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, what string, err error) {
	writeError(r.Context(), w, s.failed(r, what, err))
}

// failed logs a failure and returns the 500 api_error for it.
func (s *Server) failed(r *http.Request, what string, err error) *apiError {
	s.log().ErrorContext(r.Context(), "payments: "+what, "err", err)
	return &apiError{status: http.StatusInternalServerError, Type: typeAPI, Message: what + " failed; retry with the same idempotency key"}
}

// stripeAuthErrors rewrites web.BearerAuth's RFC 9457 401, and its 429
// for an address with too many failed authentications, into Stripe's
// shape, because stripe-go only understands {"error": {...}} and would
// otherwise surface a bare string without status.
func stripeAuthErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&authErrorWriter{ResponseWriter: w}, r)
	})
}

type authErrorWriter struct {
	http.ResponseWriter
	swallow bool
}

var authErrorBody = []byte(`{"error":{"type":"invalid_request_error","message":"Invalid API Key provided. Send the secret key as Authorization: Bearer <key>."}}`)

var authLimitBody = []byte(`{"error":{"type":"invalid_request_error","code":"rate_limit","message":"Too many failed authentications from this address; retry after Retry-After seconds."}}`)

func (a *authErrorWriter) WriteHeader(code int) {
	body := authErrorBody
	// Our own 429s (the idempotency key cap) are Stripe-shaped already;
	// BearerAuth's is the problem document.
	fromAuth := code == http.StatusUnauthorized ||
		(code == http.StatusTooManyRequests && a.Header().Get("Content-Type") == "application/problem+json")
	if code == http.StatusTooManyRequests {
		body = authLimitBody
	}
	if fromAuth && !a.swallow {
		a.swallow = true
		h := a.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		a.ResponseWriter.WriteHeader(code)
		_, _ = a.ResponseWriter.Write(body)
		return
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *authErrorWriter) Write(b []byte) (int, error) {
	if a.swallow {
		return len(b), nil // BearerAuth's problem document, replaced above
	}
	return a.ResponseWriter.Write(b)
}
