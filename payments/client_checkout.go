package payments

import (
	"context"
	"time"

	"github.com/stripe/stripe-go/v84"
)

var _ CheckoutGateway = (*StripeGateway)(nil)

// CreateCheckout creates a payment-mode session with one line item whose
// intent is captured manually and carries the booking reference and step.
func (g *StripeGateway) CreateCheckout(ctx context.Context, key string, c Checkout) (Session, error) {
	const op = "create checkout"
	if err := checkKey(op, key); err != nil {
		return Session{}, err
	}
	meta := map[string]string{MetadataReference: c.Reference}
	if c.Step != "" {
		meta[MetadataStep] = c.Step
	}
	p := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String(string(stripe.CheckoutSessionModePayment)),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(c.Currency),
				UnitAmount:  stripe.Int64(c.Amount),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(c.Product)},
			},
			Quantity: stripe.Int64(1),
		}},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{
			CaptureMethod: stripe.String(string(stripe.PaymentIntentCaptureMethodManual)),
			Metadata:      meta,
		},
		ClientReferenceID: stripe.String(c.Reference),
		Metadata:          map[string]string{MetadataReference: c.Reference},
		SuccessURL:        stripe.String(c.SuccessURL),
		ExpiresAt:         stripe.Int64(c.ExpiresAt.Unix()),
	}
	if c.Merchant != "" {
		p.PaymentIntentData.Description = stripe.String(c.Merchant)
	}
	if c.Locale != "" {
		p.Locale = stripe.String(c.Locale)
	}
	p.SetIdempotencyKey(key)
	s, err := g.client.V1CheckoutSessions.Create(ctx, p)
	if err != nil {
		return Session{}, classify(op, err)
	}
	return sessionFrom(s), nil
}

// GetCheckout reads a session.
func (g *StripeGateway) GetCheckout(ctx context.Context, id string) (Session, error) {
	s, err := g.client.V1CheckoutSessions.Retrieve(ctx, id, &stripe.CheckoutSessionRetrieveParams{})
	if err != nil {
		return Session{}, classify("get checkout", err)
	}
	return sessionFrom(s), nil
}

// ExpireCheckout expires an open session. A session that is no longer
// open answers Final checkout_session_unexpected_state, as with Stripe:
// the caller reads the session to learn whether it was paid.
func (g *StripeGateway) ExpireCheckout(ctx context.Context, key, id string) (Session, error) {
	const op = "expire checkout"
	if err := checkKey(op, key); err != nil {
		return Session{}, err
	}
	p := &stripe.CheckoutSessionExpireParams{}
	p.SetIdempotencyKey(key)
	s, err := g.client.V1CheckoutSessions.Expire(ctx, id, p)
	if err != nil {
		return Session{}, classify(op, err)
	}
	return sessionFrom(s), nil
}

// GetIntent reads one intent by ID.
func (g *StripeGateway) GetIntent(ctx context.Context, id string) (Intent, error) {
	return g.current(ctx, "get intent", id)
}

func sessionFrom(s *stripe.CheckoutSession) Session {
	out := Session{
		ID: s.ID, URL: s.URL, Status: string(s.Status), PaymentStatus: string(s.PaymentStatus),
		ExpiresAt: time.Unix(s.ExpiresAt, 0).UTC(),
	}
	if s.PaymentIntent != nil {
		out.IntentID = s.PaymentIntent.ID
	}
	return out
}
