// Package payments is the application's payment port: the Gateway the
// worker's activities call, its stripe-go implementation (StripeGateway),
// the classification of its errors, and Stripe's names (intent and
// session statuses, metadata keys, error codes) that callers switch on.
// The Stripe-compatible payment API that answers it here is package
// stripeapi; in production the same StripeGateway talks to api.stripe.com,
// with nothing changed but the base URL and the secret key.
//
// The Gateway classifies every failure as Retryable, Final or Unknown
// (outcome.Of), makes "already captured" and "already canceled" successes so
// that retries and compensations are idempotent across keys, and never
// sends a request without the caller's idempotency key.
//
// Against real Stripe, keep in mind: Stripe keeps idempotency keys for 24
// hours (ours: the store's TTL, 72 hours by default), has no booking-step
// uniqueness, and its search index lags writes; see FindByReference.
package payments
