package payments

import (
	"context"

	"github.com/stripe/stripe-go/v84"
)

// AuthorisationLister is implemented by gateways that can list every live
// authorisation (status requires_capture) of the account: the reconciler
// sweeps with it for authorisations whose booking saga is gone. It is not
// part of Gateway because a saga never needs it.
type AuthorisationLister interface {
	// LiveAuthorisations lists the intents in requires_capture. A search
	// index that lags (real Stripe's) misses the newest ones; the sweep
	// only wants intents older than a grace period anyway, and the next
	// sweep finds what this one missed.
	LiveAuthorisations(ctx context.Context) ([]Intent, error)
}

var _ AuthorisationLister = (*StripeGateway)(nil)

// maxSwept bounds one sweep: more live authorisations than this at once is
// an incident for a person, not for a loop.
const maxSwept = 10000

// LiveAuthorisations searches status:'requires_capture', following pages.
func (g *StripeGateway) LiveAuthorisations(ctx context.Context) ([]Intent, error) {
	const op = "list live authorisations"
	p := &stripe.PaymentIntentSearchParams{}
	p.Query = "status:'" + string(stripe.PaymentIntentStatusRequiresCapture) + "'"
	p.Limit = stripe.Int64(100)
	var out []Intent
	for pi, err := range g.client.V1PaymentIntents.Search(ctx, p) {
		if err != nil {
			return nil, classify(op, err)
		}
		if pi.Status != stripe.PaymentIntentStatusRequiresCapture {
			continue // the search said so, the object must agree
		}
		out = append(out, intentFrom(pi))
		if len(out) >= maxSwept {
			break
		}
	}
	return out, nil
}
