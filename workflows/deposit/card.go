package deposit

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
)

// Card is a card deposit's steps, in one home for the two workflows that
// run them: the appointment runs them itself (a booking started since
// appointment.VersionCardInline), and this package's saga runs them as
// the appointment's child for runs started before. The activity IDs and
// summaries are those the saga always recorded, so its histories replay.
type Card struct {
	Tenant, Reference, Currency, PaymentMethod, Description string
	Amount                                                  int64
	Tuning                                                  workflows.Tuning
	// Versions answers the steps' GetVersion calls (the caller's baseline;
	// the zero value asks workflow.GetVersion).
	Versions workflows.Versions
	// Record notes each step's outcome in the caller's state.
	Record func(name, activityID string, s activities.Step, err error)
	// Reviewing is called when a person has a case to decide (its ID);
	// Retrying when they decided to try again.
	Reviewing func(ctx workflow.Context, caseID string)
	Retrying  func(ctx workflow.Context)
}

// CardOf is the card steps of the saga's request.
func CardOf(r Request, t workflows.Tuning) Card {
	return Card{Tenant: r.Tenant, Reference: r.Reference, Currency: r.Currency, PaymentMethod: r.PaymentMethod,
		Description: r.Description, Amount: r.Amount, Tuning: t}
}

// Authorize authorises the deposit (manual capture) and returns the
// intent. An outcome still unknown after the retries is reconciled by
// reference, then retried under the same key within the provider's key
// retention, then put to a person. A final error (a decline) is returned
// as the activity's.
func (c Card) Authorize(ctx workflow.Context) (string, error) {
	// The call is not abandoned on cancellation: its answer tells what to
	// void. Abandoning it would void by reference before the
	// authorisation lands and leave it live.
	ctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	in := activities.DepositInput{
		Tenant: c.Tenant, Reference: c.Reference, Amount: c.Amount, Currency: c.Currency,
		PaymentMethod: c.PaymentMethod, Description: c.Description,
	}
	started := workflow.Now(ctx)
	for attempt := 1; ; attempt++ {
		id := "authorize-deposit"
		if attempt > 1 {
			id = fmt.Sprintf("authorize-deposit-%d", attempt)
		}
		var res activities.IntentResult
		err := workflow.ExecuteActivity(workflows.ActivityCtx(ctx, c.Tuning, id, fmt.Sprintf("Authorise %d %s", c.Amount, c.Currency)),
			act.AuthorizeDeposit, in).Get(ctx, &res)
		c.Record("authorize deposit", id, res.Step, err)
		if err == nil {
			return res.Intent.ID, nil
		}
		if workflows.IsFinal(err) {
			return "", err
		}
		// Unknown: look the authorisation up by the booking reference.
		found, ferr := c.find(ctx, fmt.Sprintf("find-deposit-%d", attempt))
		if ferr == nil && found.Found {
			return found.Intent.ID, nil
		}
		if ferr == nil && attempt == 1 && c.lookupProvesAbsence(ctx, found) {
			continue // the payment API answered: nothing happened, try once more
		}
		if ferr == nil && attempt == 1 {
			// "Not found" proves nothing here: keep the key that may have
			// authorised, within the provider's key retention.
			intent, serr, settled := c.retrySameKey(ctx, in, id, started)
			if settled {
				return intent, serr
			}
			if serr != nil {
				err = serr
			}
		}
		action, rerr := workflows.AwaitReview(ctx, c.Tuning, c.Tenant, id, err, func(caseID string) { c.Reviewing(ctx, caseID) })
		if rerr != nil || action != review.ActionRetry {
			return "", fmt.Errorf("deposit outcome unknown, review: %s: %w", action, err)
		}
		c.Retrying(ctx)
	}
}

// find looks the deposit up by the booking reference.
func (c Card) find(ctx workflow.Context, activityID string) (activities.IntentResult, error) {
	var found activities.IntentResult
	err := workflow.ExecuteActivity(workflows.ActivityCtx(ctx, c.Tuning, activityID, "Reconcile deposit by reference"),
		act.FindDeposit, activities.IntentInput{Tenant: c.Tenant, Reference: c.Reference}).Get(ctx, &found)
	return found, err
}

// VersionNewKeyOnlyIfAuthoritative: after an unknown authorisation that a
// search by reference does not find, the saga tries a new key only when
// the gateway's lookup is authoritative; otherwise it retries the same key.
const VersionNewKeyOnlyIfAuthoritative = "new-key-only-if-lookup-authoritative"

// lookupProvesAbsence reports whether a lookup that found nothing proves
// that nothing was authorised. The gateway's property travels in the
// activity's result (never read from configuration here), so a replay
// decides the same. Runs recorded before the change keep the new key.
func (c Card) lookupProvesAbsence(ctx workflow.Context, found activities.IntentResult) bool {
	if found.Authoritative {
		return true
	}
	return c.Versions.GetVersion(ctx, VersionNewKeyOnlyIfAuthoritative, workflow.DefaultVersion, 1) == workflow.DefaultVersion
}

// retrySameKey retries the authorisation under the key of activity id
// (the activity ID is reused, so the key is the same) and reconciles by
// reference after each round, until the provider's key retention
// (Tuning.KeyHorizon) since started has passed. The provider answers a
// repeated key with its first result, so this can never authorise twice.
// settled is false when the horizon passed with the outcome still unknown:
// then only a person may decide, and err is the last unknown outcome.
func (c Card) retrySameKey(ctx workflow.Context, in activities.DepositInput, id string, started time.Time) (intent string, err error, settled bool) {
	for round := 2; workflow.Now(ctx).Sub(started) < c.Tuning.KeyHorizon; round++ {
		// Spaced like the step's last retries, not hammering the provider.
		if serr := workflow.Sleep(ctx, c.Tuning.MaxRetryInterval); serr != nil {
			return "", serr, true
		}
		var res activities.IntentResult
		err = workflow.ExecuteActivity(workflows.ActivityCtx(ctx, c.Tuning, id, fmt.Sprintf("Authorise %d %s (same key, round %d)", c.Amount, c.Currency, round)),
			act.AuthorizeDeposit, in).Get(ctx, &res)
		c.Record("authorize deposit", id, res.Step, err)
		if err == nil {
			return res.Intent.ID, nil, true
		}
		if workflows.IsFinal(err) {
			return "", err, true
		}
		found, ferr := c.find(ctx, fmt.Sprintf("find-deposit-1-%d", round))
		if ferr == nil && found.Found {
			return found.Intent.ID, nil, true
		}
	}
	return "", err, false
}

// Capture captures the authorised intent. The booking stands in the
// calendar by then, so an outage must not undo it: the capture retries
// with its key until the payment API answers, and an error that is not
// final is reconciled by reference (the answer may have been lost).
func (c Card) Capture(ctx workflow.Context, intentID string) error {
	var res activities.IntentResult
	err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, c.Tuning, "capture-deposit", "Capture deposit "+intentID),
		act.CaptureDeposit, activities.IntentInput{Tenant: c.Tenant, Reference: c.Reference, IntentID: intentID}).Get(ctx, &res)
	c.Record("capture deposit", "capture-deposit", res.Step, err)
	if err == nil || workflows.IsFinal(err) {
		return err
	}
	if c.capturedAfterAll(ctx) {
		return nil
	}
	return err
}

// capturedAfterAll reconciles a capture whose outcome is unknown.
func (c Card) capturedAfterAll(ctx workflow.Context) bool {
	var found activities.IntentResult
	err := workflow.ExecuteActivity(workflows.ActivityCtx(ctx, c.Tuning, "find-capture", "Reconcile capture by reference"),
		act.FindDeposit, activities.IntentInput{Tenant: c.Tenant, Reference: c.Reference}).Get(ctx, &found)
	return err == nil && found.Found && found.Intent.AmountCaptured > 0
}
