package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
)

// errMessageNotSent marks a customer message whose reservation could not
// be made before its moment passed (the outbox's database was down the
// whole time): its step reads "not sent" with the reason, never "ok".
var errMessageNotSent = errors.New("not sent")

// FailedResult is a failed step's Result: "not sent" for a customer
// message whose moment passed, else "failed".
func FailedResult(err error) string {
	if errors.Is(err, errMessageNotSent) {
		return "not sent"
	}
	return "failed"
}

// minMessageWindow is how long a message whose moment has already passed
// is still offered to the outbox: the reservation is made and the relay
// records the row as expired, so the reason is kept where people look.
const minMessageWindow = time.Minute

// messageCtx is ActivityCtx for reserving a customer message
// (confirmation, payment link, cancellation, move, reminder). Like a
// compensation it retries with the same key and no attempt limit, so a
// database failover of a minute or two delays the message instead of
// dropping it, but only until the message's moment sendBy (zero: the
// compensation bound). What the relay reaches after sendBy it records as
// expired, so retrying up to the bound never sends anything late.
func messageCtx(ctx workflow.Context, t Tuning, id, summary string, sendBy time.Time) workflow.Context {
	bound := t.CompensationTimeout
	if !sendBy.IsZero() {
		bound = min(bound, max(sendBy.Sub(workflow.Now(ctx)), minMessageWindow))
	}
	return untilAnsweredCtx(ctx, t, id, summary, bound)
}

// SendMessage reserves the customer message in with messageCtx. A
// reservation that did not land before the bound is errMessageNotSent,
// with the bound and the last cause.
func SendMessage(ctx workflow.Context, t Tuning, id, summary string, in activities.ConfirmationInput) (activities.Step, error) {
	var step activities.Step
	err := workflow.ExecuteActivity(messageCtx(ctx, t, id, summary, in.SendBy), act.SendConfirmation, in).Get(ctx, &step)
	if err != nil && temporal.IsTimeoutError(err) {
		moment := "the retry bound"
		if !in.SendBy.IsZero() {
			moment = in.SendBy.UTC().Format(time.RFC3339)
		}
		err = fmt.Errorf("%w: the outbox did not take it before %s: %w", errMessageNotSent, moment, err)
	}
	return step, err
}

// ReplyChannel answers WhatsApp on WhatsApp and everyone else by SMS.
func ReplyChannel(c Channel) string {
	if c == ChannelWhatsApp {
		return string(ChannelWhatsApp)
	}
	return "sms"
}
