// Package payments is bookonce's payment side: a Stripe-compatible payment
// API (Server) and the application's payment port (Gateway) with its
// stripe-go implementation (StripeGateway).
//
// The API speaks a faithful subset of Stripe's v1 wire protocol for
// PaymentIntents, Refunds, Checkout Sessions and events, so stripe-go works against it unchanged and
// production can switch to api.stripe.com by changing only the base URL and
// the secret key. Every mutating route runs in the idempotency middleware's
// transaction: the effect and the stored answer commit together, a retry
// with the same key replays the answer byte for byte, and decided refusals
// (a declined card, a wrong state) are stored and replayed like successes.
// PostgreSQL is the last line: one live authorisation per booking reference
// and step, and never more refunded than captured.
//
// For payment links the API also serves Checkout Sessions with a hosted
// payment page (/pay/{session}), records Stripe-style events in the
// transaction of the change they report, and delivers them as signed
// webhooks (Deliverer); see docs/payment-links.md.
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
