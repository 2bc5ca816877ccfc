package payments

import (
	"context"
	"fmt"
	"time"

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
	// CapturedSince lists the intents created after since whose capture
	// is not fully refunded: the sweep refunds those of sagas that ended
	// without a booking (a compensation that missed one behind a lagging
	// search). It lags as LiveAuthorisations does.
	CapturedSince(ctx context.Context, since time.Time) ([]Intent, error)
}

var _ AuthorisationLister = (*StripeGateway)(nil)

// maxSwept bounds one sweep: more live authorisations than this at once is
// an incident for a person, not for a loop.
const maxSwept = 10000

// LiveAuthorisations searches status:'requires_capture', following pages.
func (g *StripeGateway) LiveAuthorisations(ctx context.Context) ([]Intent, error) {
	q := "status:'" + string(stripe.PaymentIntentStatusRequiresCapture) + "'"
	return g.sweep(ctx, "list live authorisations", q, func(pi *stripe.PaymentIntent) bool {
		return pi.Status == stripe.PaymentIntentStatusRequiresCapture
	})
}

// CapturedSince searches status:'succeeded' AND created>since, following
// pages, and keeps what is not fully refunded.
func (g *StripeGateway) CapturedSince(ctx context.Context, since time.Time) ([]Intent, error) {
	q := fmt.Sprintf("status:'%s' AND created>%d", stripe.PaymentIntentStatusSucceeded, since.Unix())
	return g.sweep(ctx, "list captured deposits", q, func(pi *stripe.PaymentIntent) bool {
		return pi.Status == stripe.PaymentIntentStatusSucceeded
	})
}

// sweep runs one search and keeps the intents keep agrees with (the
// search said so, the object must agree), up to maxSwept.
func (g *StripeGateway) sweep(ctx context.Context, op, query string, keep func(*stripe.PaymentIntent) bool) ([]Intent, error) {
	p := &stripe.PaymentIntentSearchParams{}
	p.Query = query
	p.Limit = stripe.Int64(100)
	var out []Intent
	for pi, err := range g.client.V1PaymentIntents.Search(ctx, p) {
		if err != nil {
			return nil, classify(op, err)
		}
		if !keep(pi) {
			continue
		}
		in := intentFrom(pi)
		if in.Status == StatusSucceeded && in.AmountRefunded >= in.AmountCaptured {
			continue // given back already
		}
		out = append(out, in)
		if len(out) >= maxSwept {
			break
		}
	}
	return out, nil
}
