// Package outcome names how a failed call to another system ended, as the
// client at that boundary decided it: the caller's retry decision depends
// on it (docs/design.md, rules 7 and 19: a timeout is an unknown, not a failure).
package outcome

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
