package channels

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v84"
	"github.com/stripe/stripe-go/v84/webhook"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// maxStripeBody bounds a payment webhook's body; Stripe's events are a few
// KiB.
const maxStripeBody = 64 << 10

// Inbox providers and states (inbox_events.provider, .state).
const (
	providerTwilio = "twilio"
	providerStripe = "stripe"
	statePending   = "pending"
	stateDelivered = "delivered"
	// stateUnmatched: a payment event whose workflow does not exist
	// (closed, or never started); kept for the ops page, never relayed.
	stateUnmatched = "unmatched"
)

// paymentChannel is the inbox's channel of payment webhooks.
const paymentChannel = "payment"

// paymentInbox is what the inbox keeps of a payment webhook: enough to
// signal the payment workflow again if Temporal was unreachable.
type paymentInbox struct {
	Tenant string `json:"tenant"`
	// Reference is the appointment's workflow ID (the session's and
	// intent's metadata.booking_reference); "" when the event names none.
	Reference string        `json:"reference,omitempty"`
	Event     deposit.Event `json:"event"`
}

// eventObject is what the gateway reads of an event's data.object.
type eventObject struct {
	ID                string            `json:"id"`
	ClientReferenceID string            `json:"client_reference_id"`
	Metadata          map[string]string `json:"metadata"`
	// PaymentIntent is a session's intent: an ID, an expanded object or null.
	PaymentIntent json.RawMessage `json:"payment_intent"`
}

// stripeRoute is a payment webhook route: the metrics' name for it, the
// secret it verifies with and, on a tenant's own route, whose events it
// takes.
type stripeRoute struct {
	name, secret string
	tenant       string // "": the shared route, where the reference names the tenant
}

// stripeWebhook is the shared route (STRIPE_WEBHOOK_SECRET), for a
// deployment whose shops share one Stripe account they cannot reach.
func (g *Gateway) stripeWebhook(w http.ResponseWriter, r *http.Request) {
	if g.StripeWebhookSecret == "" {
		g.Metrics.rejected.WithLabelValues(RouteStripe, "unconfigured").Inc()
		g.log().Error("payment webhook refused: the gateway has no STRIPE_WEBHOOK_SECRET to verify it with")
		writeStripeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "webhook secret not configured"})
		return
	}
	g.receiveStripe(w, r, stripeRoute{name: RouteStripe, secret: g.StripeWebhookSecret})
}

// tenantStripeWebhook is a tenant's own route, verified with the secret
// of its own Stripe account (STRIPE_WEBHOOK_SECRETS). A tenant the
// registry does not know, or without a secret, is answered 404 alike
// (the route tells nobody which tenants exist) and nothing is recorded:
// the sender retries once the configuration catches up.
func (g *Gateway) tenantStripeWebhook(w http.ResponseWriter, r *http.Request) {
	tenant := r.PathValue("tenant")
	secret, ok := g.tenantSecret(tenant)
	if !ok {
		g.Metrics.rejected.WithLabelValues(RouteStripeTenant, "unknown_tenant").Inc()
		g.log().Warn("payment webhook refused: no tenant with a webhook secret of its own (STRIPE_WEBHOOK_SECRETS) at this route", "tenant", logReference(tenant))
		writeStripeJSON(w, http.StatusNotFound, map[string]string{"error": "no webhook endpoint here"})
		return
	}
	g.receiveStripe(w, r, stripeRoute{name: RouteStripeTenant, secret: secret, tenant: tenant})
}

// tenantSecret is the secret of tenant's own route; false when the
// registry does not know tenant or it has none.
func (g *Gateway) tenantSecret(tenant string) (string, bool) {
	secret, ok := g.StripeTenantSecrets[tenant]
	if !ok || g.Tenants == nil {
		return "", false
	}
	_, known := g.Tenants.Get(tenant)
	return secret, known
}

// receiveStripe receives a payment provider's event: verified, recorded in
// the inbox by its event ID before any effect, then signalled to the
// payment workflow of its booking reference. Every verified event is
// answered 200 once recorded, also when no workflow waits for it: the
// provider must not retry an event nobody can use.
func (g *Gateway) receiveStripe(w http.ResponseWriter, r *http.Request, route stripeRoute) {
	event, ok := g.verifyStripe(w, r, route)
	if !ok {
		return
	}
	p := g.attribute(g.paymentInboxOf(event), route)
	state := statePending
	if p.Reference == "" || !sagaActsOn(p.Event.Type) {
		state = stateDelivered // nothing to signal: the relay must never pick it up
	}
	fresh, err := g.recordPayment(r.Context(), p, string(event.Type), state)
	if err != nil {
		g.log().Error("inbox insert failed", "route", route.name, "event", event.ID, "err", err)
		writeStripeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "try again"}) // the provider retries
		return
	}
	if !fresh {
		g.Metrics.duplicates.WithLabelValues("inbox", p.Tenant, route.name).Inc()
		writeStripeJSON(w, http.StatusOK, map[string]any{"received": true, "duplicate": true})
		return
	}
	g.Metrics.accepted.WithLabelValues(route.name).Inc()
	if state == stateDelivered {
		g.log().Debug("payment webhook recorded; nothing to signal", "event", event.ID, "type", event.Type)
	} else if err := g.deliverPaymentNow(r.Context(), p); err != nil {
		// Accepted all the same: the relay delivers it later.
		g.log().Warn("payment workflow not reached; the relay will retry", "event", event.ID, "type", event.Type, "err", err)
	}
	writeStripeJSON(w, http.StatusOK, map[string]any{"received": true})
}

// attribute limits an event to the tenants its route speaks for. Any
// shop with a Stripe account writes what it likes into a session's
// client_reference_id or metadata, so a reference alone never makes an
// event another tenant's: a tenant's route takes every event as that
// tenant's and drops a reference of anyone else's; the shared route
// drops the reference of a tenant with a secret of its own (that
// tenant's events come on its route). A dropped reference is recorded
// without it: never signalled, never on another tenant's ops page.
func (g *Gateway) attribute(p paymentInbox, route stripeRoute) paymentInbox {
	switch {
	case route.tenant != "":
		if p.Reference != "" && p.Tenant != route.tenant {
			g.log().Warn("payment webhook on a tenant's route names a reference outside its namespace; recorded as the route tenant's without it",
				"tenant", route.tenant, "event", p.Event.EventID, "type", p.Event.Type, "reference", logReference(p.Reference))
			p.Reference = ""
		}
		p.Tenant = route.tenant
	case g.StripeTenantSecrets[p.Tenant] != "":
		g.log().Warn("payment webhook on the shared route names a tenant with a webhook secret of its own (STRIPE_WEBHOOK_SECRETS), whose events come on its route; recorded without the reference",
			"tenant", p.Tenant, "event", p.Event.EventID, "type", p.Event.Type)
		p.Tenant, p.Reference = unconfiguredTenant, ""
	}
	return p
}

// verifyStripe reads the bounded body and checks the Stripe-Signature
// header with route's secret (HMAC and a timestamp within five minutes),
// answering 400 (413 for an oversized body) when it fails. The API
// version is not checked: only id, type, created and a few stable fields
// of data.object are read, and refusing a signed event for its version
// would lose it for good.
func (g *Gateway) verifyStripe(w http.ResponseWriter, r *http.Request, route stripeRoute) (stripe.Event, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxStripeBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		status, reason := http.StatusBadRequest, "malformed"
		if errors.As(err, &tooLarge) {
			status, reason = http.StatusRequestEntityTooLarge, "too_large"
		}
		g.Metrics.rejected.WithLabelValues(route.name, reason).Inc()
		writeStripeJSON(w, status, map[string]string{"error": "unreadable body"})
		return stripe.Event{}, false
	}
	event, err := webhook.ConstructEventWithOptions(body, r.Header.Get("Stripe-Signature"), route.secret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err == nil && (event.ID == "" || event.Type == "" || event.Data == nil) {
		err = errors.New("event without id, type or data")
	}
	if err != nil {
		reason := signatureReason(err)
		g.Metrics.rejected.WithLabelValues(route.name, reason).Inc()
		g.log().Warn("payment webhook refused", "route", route.name, "tenant", route.tenant, "reason", reason)
		writeStripeJSON(w, http.StatusBadRequest, map[string]string{"error": reason})
		return stripe.Event{}, false
	}
	return event, true
}

// signatureReason names why a payment webhook was refused.
func signatureReason(err error) string {
	switch {
	case errors.Is(err, webhook.ErrTooOld):
		return "stale"
	case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrNoValidSignature), errors.Is(err, webhook.ErrInvalidHeader):
		return "signature"
	}
	return "malformed"
}

// paymentInboxOf extracts the booking reference and the objects an event
// is about: a Checkout Session's metadata.booking_reference (else its
// client_reference_id), a PaymentIntent's metadata.booking_reference.
// Other events (a refund's charge, say) name no reference.
func (g *Gateway) paymentInboxOf(event stripe.Event) paymentInbox {
	var obj eventObject
	if err := json.Unmarshal(event.Data.Raw, &obj); err != nil {
		// The signature is valid: an object we cannot read names no
		// reference and is recorded all the same (rule 15).
		g.log().Warn("payment webhook: data.object unreadable; recorded without a reference", "event", event.ID, "type", event.Type)
	}
	ev := deposit.Event{EventID: event.ID, Type: string(event.Type), Created: time.Unix(event.Created, 0).UTC()}
	var ref string
	switch {
	case strings.HasPrefix(ev.Type, "checkout.session."):
		ev.SessionID, ev.IntentID = obj.ID, intentID(obj.PaymentIntent)
		ref = obj.Metadata["booking_reference"]
		if ref == "" {
			ref = obj.ClientReferenceID
		}
	case strings.HasPrefix(ev.Type, "payment_intent."):
		ev.IntentID, ref = obj.ID, obj.Metadata["booking_reference"]
	}
	return paymentInbox{Tenant: g.tenantOfReference(ref), Reference: ref, Event: ev}
}

// sagaActsOn reports whether the payment saga acts on an event type: a
// link paid (either of its two events, so one lost webhook costs
// nothing) or lapsed. The rest are echoes of the saga's own steps
// (capture, void, refund) or a declined attempt after which the link
// stays open; they are recorded, not signalled: each signal would cost
// the saga a workflow task and a read of the link for nothing.
func sagaActsOn(eventType string) bool {
	switch eventType {
	case deposit.EventCheckoutCompleted, deposit.EventCheckoutExpired, deposit.EventIntentCapturable:
		return true
	}
	return false
}

// intentID reads a session's payment_intent: an ID or an expanded object.
func intentID(raw json.RawMessage) string {
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id
	}
	var obj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.ID
	}
	return ""
}

// tenantOfReference is the tenant named by an appointment workflow ID
// (appointment:<tenant>:<intent>) when the registry knows it, else "-".
func (g *Gateway) tenantOfReference(ref string) string {
	rest, ok := strings.CutPrefix(ref, "appointment:")
	tenant, _, found := strings.Cut(rest, ":")
	if !ok || !found || g.Tenants == nil {
		return unconfiguredTenant
	}
	if _, known := g.Tenants.Get(tenant); !known {
		return unconfiguredTenant
	}
	return tenant
}

func writeStripeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body) // the status is sent; a broken connection has nobody to tell
}

// logReference is a reference as logs may show it.
func logReference(ref string) string { return mask.Phones(ref[:min(len(ref), 128)]) }
