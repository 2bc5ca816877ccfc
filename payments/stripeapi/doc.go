// Package stripeapi is bookonce's Stripe-compatible payment API (Server):
// a faithful subset of Stripe's v1 wire protocol for PaymentIntents,
// Refunds, Checkout Sessions and events, so stripe-go (package payments'
// StripeGateway) works against it unchanged and production can switch to
// api.stripe.com by changing only the base URL and the secret key.
//
// Every mutating route runs in the idempotency middleware's transaction:
// the effect and the stored answer commit together, a retry with the same
// key replays the answer byte for byte, and decided refusals (a declined
// card, a wrong state) are stored and replayed like successes. PostgreSQL
// is the last line: one live authorisation per booking reference and
// step, and never more refunded than captured.
//
// For payment links the API also serves Checkout Sessions with a hosted
// payment page (/pay/{session}), records Stripe-style events in the
// transaction of the change they report, and delivers them as signed
// webhooks (Deliverer); see docs/payment-links.md.
//
// The tests here drive the server through stripe-go and through the
// port's StripeGateway, and assert on its rows: the contract between the
// two sides is tested where the server is.
package stripeapi
