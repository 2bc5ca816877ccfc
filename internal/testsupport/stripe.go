package testsupport

import (
	"github.com/stripe/stripe-go/v84"
)

// StripeClient is plain stripe-go pointed at a payment API on loopback
// (ours), without retries or logging, for tests that act as a merchant.
func StripeClient(baseURL, key string) *stripe.Client {
	return stripe.NewClient(key, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL: stripe.String(baseURL), MaxNetworkRetries: stripe.Int64(0), LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
}

// DepositSession is the Checkout Session a booking's deposit link is made
// of: 20,00 EUR, authorised only (manual capture), carrying the booking
// reference on the session and on its intent.
func DepositSession(ref, successURL string) *stripe.CheckoutSessionCreateParams {
	return &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String("payment"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency: stripe.String("eur"), UnitAmount: stripe.Int64(2000),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("Deposit tire change")},
			},
			Quantity: stripe.Int64(1),
		}},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{
			CaptureMethod: stripe.String("manual"), Metadata: map[string]string{"booking_reference": ref},
		},
		SuccessURL:        stripe.String(successURL),
		ClientReferenceID: stripe.String(ref),
		Metadata:          map[string]string{"booking_reference": ref},
	}
}
