package payments

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/bookonce/bookonce/outcome"
)

// Error is a failed gateway call, classified at the boundary so that no
// stripe-go type leaks into workflows.
type Error struct {
	// Op names the gateway method, e.g. "authorize".
	Op string
	// Status is the HTTP status; 0 when no response arrived.
	Status int
	// Type is Stripe's error type (card_error, invalid_request_error,
	// idempotency_error, api_error); Code its error code (card_declined,
	// payment_intent_unexpected_state, ...); DeclineCode the card's reason.
	Type, Code, DeclineCode string
	// Param names the offending request parameter, if any.
	Param   string
	Message string
	Outcome outcome.Outcome
	// Err is the underlying error (a *stripe.Error or a transport error).
	Err error
}

// Error describes the failure with its outcome, so a log line alone tells
// whether the effect may have happened.
func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("payments %s: %s outcome: %v", e.Op, e.Outcome, e.Err)
	}
	return fmt.Sprintf("payments %s: %d %s %s: %s (%s)", e.Op, e.Status, e.Type, e.Code, e.Message, e.Outcome)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Class is the outcome of the failed call (outcome.Classed).
func (e *Error) Class() outcome.Outcome { return e.Outcome }

// CodeOf returns the provider's error code of err, or "".
func CodeOf(err error) string {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// outcomeForStatus maps an HTTP answer to an outcome: a 409 is a key in
// flight (Stripe's idempotency lock), which decides nothing yet; the rest
// as for any API with idempotency keys (outcome.OfStatus).
func outcomeForStatus(status int) outcome.Outcome {
	if status == http.StatusConflict {
		return outcome.Retryable
	}
	return outcome.OfStatus(status)
}
