package appointment

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// versionCardInline: a card deposit runs as steps of the appointment
// (deposit.Card: the same activities, the same recipe for their keys, the
// same reconciliation, review and compensation) instead of in the payment
// saga it started as a child. The child and the signals between the two
// cost a booking nine of its 23 workflow tasks and a workflow start
// (docs/benchmarks.md, "Where a booking's workflow tasks go"). Runs that
// started before keep their child; a payment link keeps its saga, which
// waits for the customer and the provider's events.
const versionCardInline = "card-deposit-inline"

// card is the deposit's card steps, reporting into the appointment.
func (a *appointment) card() deposit.Card {
	c := deposit.CardOf(a.depositRequest(), a.tuning)
	c.Versions, c.Record = a.versions, a.record
	c.Reviewing = func(ctx workflow.Context, caseID string) {
		a.state.ReviewCase, a.state.Payment = caseID, deposit.NeedsReview
		a.show(ctx, workflows.StatusNeedsReview, "deposit outcome unknown: waiting for review case "+caseID)
		a.reviewing.SendAsync(caseID)
	}
	c.Retrying = func(ctx workflow.Context) {
		a.state.ReviewCase, a.state.Payment = "", deposit.Authorizing
		a.show(ctx, workflows.StatusAuthorizing, "retrying the deposit after review")
	}
	return c
}

// authorizeCard authorises the deposit beside the appointment's own
// waits, as it waited for the payment saga: a cancel, or no answer within
// AuthorizationTimeout (the review's time on top once a person has a
// case), ends the booking, and the compensation voids what the
// authorisation leaves once it has answered (voidDeposit).
func (a *appointment) authorizeCard(ctx workflow.Context) *outcome {
	if err := a.upsert(ctx, workflows.StatusAuthorizing, "authorising the deposit"); err != nil {
		return &outcome{workflows.StatusRejected, err.Error()}
	}
	a.reviewing = workflow.NewBufferedChannel(ctx, 1)
	card := a.card()
	var settle workflow.Settable
	a.cardAuth, settle = workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) { settle.Set(card.Authorize(ctx)) })
	timerCtx, stopTimer := workflow.WithCancel(ctx)
	defer func() { stopTimer() }()
	timer := workflow.NewTimer(timerCtx, a.tuning.AuthorizationTimeout)
	for {
		var answered, timedOut, cancelled bool
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(a.cardAuth, func(workflow.Future) { answered = true })
		sel.AddReceive(a.reviewing, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			// A person decides now; give them the review's time.
			stopTimer()
			timerCtx, stopTimer = workflow.WithCancel(ctx)
			timer = workflow.NewTimer(timerCtx, a.tuning.ReviewTimeout+a.tuning.AuthorizationTimeout)
		})
		a.boundAuthorization(ctx, sel, timer, &timedOut, &cancelled)
		sel.Select(ctx)
		switch {
		case answered:
			return a.cardAnswered(ctx)
		case cancelled:
			return &outcome{workflows.StatusCancelled, "cancelled"}
		case timedOut:
			return &outcome{workflows.StatusPaymentFailed, "no authorisation in time"}
		}
	}
}

// cardAnswered reads the authorisation's answer into the state.
func (a *appointment) cardAnswered(ctx workflow.Context) *outcome {
	var intent string
	err := a.cardAuth.Get(ctx, &intent)
	switch {
	case err == nil:
		a.state.Payment, a.state.IntentID = deposit.Authorized, intent
		return nil
	case workflows.ErrorType(err) == activities.ErrTypePaymentDeclined:
		a.state.Payment = deposit.Declined
		return &outcome{workflows.StatusPaymentFailed, "card_declined"}
	}
	a.state.Payment = deposit.Failed
	return &outcome{workflows.StatusPaymentFailed, err.Error()}
}

// captureCard captures the authorised deposit (deposit.Card.Capture
// reconciles a lost answer); what is not captured the compensation voids
// or refunds.
func (a *appointment) captureCard(ctx workflow.Context) *outcome {
	if err := a.card().Capture(ctx, a.state.IntentID); err != nil {
		if temporal.IsCanceledError(err) {
			return a.fromError(err)
		}
		a.state.Payment = deposit.Failed
		return &outcome{workflows.StatusPaymentFailed, "deposit not captured: " + err.Error()}
	}
	a.state.Payment = deposit.Captured
	return nil
}

// cardIntent waits until an authorisation still running has answered
// (the booking was cancelled or timed out meanwhile), so the void names
// what it left; "" when it left nothing known.
func (a *appointment) cardIntent(ctx workflow.Context) string {
	var intent string
	if err := a.cardAuth.Get(ctx, &intent); err != nil {
		return ""
	}
	a.state.IntentID = intent
	return intent
}
