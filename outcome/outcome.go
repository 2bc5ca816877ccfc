// Package outcome names how a failed call to another system ended, as the
// client at that boundary decided it: the caller's retry decision depends
// on it (docs/design.md, rules 7 and 19: a timeout is an unknown, not a failure).
package outcome

import (
	"errors"
	"net/http"
)

// Outcome classifies a failed call.
type Outcome int

// Outcomes of a failed call.
const (
	// Retryable: nothing happened; the same call may be repeated with the
	// same key.
	Retryable Outcome = iota + 1
	// Final: the other side decided; repeating the call gives the same answer.
	Final
	// Unknown: the request may or may not have taken effect (timeout, reset,
	// gateway error). Retry with the same key or reconcile; never re-send
	// with a new key.
	Unknown
)

// String names the outcome for logs and errors.
func (o Outcome) String() string {
	switch o {
	case Retryable:
		return "retryable"
	case Final:
		return "final"
	case Unknown:
		return "unknown"
	}
	return "invalid"
}

// Classed is implemented by the errors a client boundary classified
// (calendar.Error, payments.Error, twilio.Error): callers learn the
// outcome without knowing the other system's codes.
type Classed interface {
	Class() Outcome
}

// Of returns the outcome of a failed call: 0 for nil (no failure), the
// class of a Classed error (found with errors.As, so wrapping keeps it),
// and Unknown for any other error: without evidence, the effect may have
// happened.
func Of(err error) Outcome {
	if err == nil {
		return 0
	}
	var c Classed
	if errors.As(err, &c) {
		return c.Class()
	}
	return Unknown
}

// OfStatus classifies the HTTP status of an error answer from an API that
// stores idempotency keys with their results (our calendar and payment
// APIs, Stripe). 502, 503 and 504 come from whatever sits in front of the
// API as often as from the API, so the request may have been processed:
// Unknown. 429 decides nothing yet, and other 5xx are Retryable: such an
// API rolls back and releases the key on them. Other 4xx are the API's
// decision: Final. Anything else (no error status) proves nothing:
// Unknown. A client whose API says more (a 409 for a key in flight,
// Twilio's error documents) decides those statuses first.
func OfStatus(status int) Outcome {
	switch {
	case status == http.StatusBadGateway, status == http.StatusServiceUnavailable, status == http.StatusGatewayTimeout:
		return Unknown
	case status == http.StatusTooManyRequests, status >= 500:
		return Retryable
	case status >= 400:
		return Final
	}
	return Unknown
}
