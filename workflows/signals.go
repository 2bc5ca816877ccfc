package workflows

import (
	"github.com/bookonce/bookonce/review"
)

// Signal names. Typed constants, so senders and receivers cannot drift.
const (
	// SignalCancel: the customer cancels before the booking is confirmed.
	SignalCancel = "cancel"
	// SignalReviewDecision carries a reviewer's ReviewDecision (defined,
	// and sent, by review.Resolver).
	SignalReviewDecision = review.SignalDecision
)

// ReviewDecision resolves the review case a workflow waits on.
type ReviewDecision = review.Decision
