package deposit

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/workflows"
)

// versionNewKeyOnlyIfAuthoritative: after an unknown authorisation that a
// search by reference does not find, the saga tries a new key only when
// the gateway's lookup is authoritative; otherwise it retries the same key.
const versionNewKeyOnlyIfAuthoritative = "new-key-only-if-lookup-authoritative"

// lookupProvesAbsence reports whether a lookup that found nothing proves
// that nothing was authorised. The gateway's property travels in the
// activity's result (never read from configuration here), so a replay
// decides the same. Runs recorded before the change keep the new key.
func (p *payment) lookupProvesAbsence(ctx workflow.Context, found activities.IntentResult) bool {
	if found.Authoritative {
		return true
	}
	return workflow.GetVersion(ctx, versionNewKeyOnlyIfAuthoritative, workflow.DefaultVersion, 1) == workflow.DefaultVersion
}

// retrySameKey retries the authorisation under the key of activity id
// (the activity ID is reused, so the key is the same) and reconciles by
// reference after each round, until the provider's key retention
// (Tuning.KeyHorizon) since started has passed. The provider answers a
// repeated key with its first result, so this can never authorise twice.
// settled is false when the horizon passed with the outcome still unknown:
// then only a person may decide, and err is the last unknown outcome.
func (p *payment) retrySameKey(ctx workflow.Context, in activities.DepositInput, id string, started time.Time) (intent string, err error, settled bool) {
	for round := 2; workflow.Now(ctx).Sub(started) < p.tuning.KeyHorizon; round++ {
		// Spaced like the step's last retries, not hammering the provider.
		if serr := workflow.Sleep(ctx, p.tuning.MaxRetryInterval); serr != nil {
			return "", serr, true
		}
		var res activities.IntentResult
		err = workflow.ExecuteActivity(workflows.ActivityCtx(ctx, p.tuning, id, fmt.Sprintf("Authorise %d %s (same key, round %d)", p.req.Amount, p.req.Currency, round)),
			act.AuthorizeDeposit, in).Get(ctx, &res)
		p.record("authorize deposit", id, res.Step, err)
		if err == nil {
			return res.Intent.ID, nil, true
		}
		if workflows.IsFinal(err) {
			return "", err, true
		}
		var found activities.IntentResult
		ferr := workflow.ExecuteActivity(workflows.ActivityCtx(ctx, p.tuning, fmt.Sprintf("find-deposit-1-%d", round), "Reconcile deposit by reference"),
			act.FindDeposit, activities.IntentInput{Tenant: p.req.Tenant, Reference: p.req.Reference}).Get(ctx, &found)
		if ferr == nil && found.Found {
			return found.Intent.ID, nil, true
		}
	}
	return "", err, false
}
