package payments

// Stripe's names for what the API and its callers share: the payment
// API (package stripeapi) answers with them and the Gateway's callers
// switch on them, so the same code works against real Stripe.

// Intent statuses, Stripe's names. The subset never produces
// requires_confirmation, requires_action or processing: it only confirms on
// create and has no asynchronous payment methods.
const (
	StatusRequiresPaymentMethod = "requires_payment_method"
	StatusRequiresCapture       = "requires_capture"
	StatusSucceeded             = "succeeded"
	StatusCanceled              = "canceled"
)

// Checkout Session statuses, Stripe's names.
const (
	SessionOpen     = "open"
	SessionComplete = "complete"
	SessionExpired  = "expired"
)

// Metadata keys that carry the business identity of an intent. They are
// plain Stripe metadata, so they travel unchanged to real Stripe; our API
// also enforces one live authorisation per (reference, step).
const (
	MetadataReference = "booking_reference"
	MetadataStep      = "step"
)

// Error codes (Error.Code, CodeOf). All but CodeReferenceConflict are
// Stripe's own, so a caller's switch works unchanged against real Stripe.
const (
	CodeCardDeclined          = "card_declined"
	CodeUnexpectedState       = "payment_intent_unexpected_state"
	CodeChargeAlreadyRefunded = "charge_already_refunded"
	CodeAmountTooLarge        = "amount_too_large"
	CodeParameterUnknown      = "parameter_unknown"
	CodeParameterMissing      = "parameter_missing"
	CodeParameterInvalidInt   = "parameter_invalid_integer"
	CodeResourceMissing       = "resource_missing"
	// CodeReferenceConflict is ours (real Stripe has no such check): the
	// booking step already holds an authorisation of another amount or
	// currency.
	CodeReferenceConflict = "reference_conflict"
)
