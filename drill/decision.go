package drill

import (
	"context"
	"fmt"
	"time"
)

// DecisionWaits are the deposits whose booking decided later than the
// workers' payment decision bound (PAYMENT_DECISION_TIMEOUT, set by the
// calendar outage): their confirmation retried through the outage while
// the payment saga waited. Each must end captured with its booking
// confirmed, or undone with a message (DoubleBooked.NotBooked and the
// outcome checks count the rest); none voided under a confirmed booking.
type DecisionWaits struct {
	// Bound is the workers' decision bound ("" without a calendar outage).
	Bound string `json:"bound,omitempty"`
	// Captured are deposits captured more than Bound after their
	// authorisation.
	Captured int `json:"captured"`
}

// decisionWaits counts the deposits captured past the decision bound.
func (e *env) decisionWaits(ctx context.Context, c *Crashes) (DecisionWaits, error) {
	if c == nil || c.CalendarOutage <= 0 {
		return DecisionWaits{}, nil
	}
	bound := DecisionTimeout(c.CalendarOutage)
	n, err := e.count(ctx, `SELECT count(*) FROM payment_intents WHERE status = 'succeeded' AND captured_at > created_at + $1::interval`,
		fmt.Sprintf("%d milliseconds", bound/time.Millisecond))
	if err != nil {
		return DecisionWaits{}, fmt.Errorf("deposits captured past the decision bound: %w", err)
	}
	return DecisionWaits{Bound: bound.String(), Captured: n}, nil
}
