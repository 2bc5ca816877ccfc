package appointment

import (
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// versionTellLinkUnavailable: the customer is told when no payment link
// could be made; runs recorded before it ended silently.
const versionTellLinkUnavailable = "tell-payment-link-unavailable"

// versionDecisionOutlastsConfirm: the payment saga waits for the
// appointment's decision as long as the appointment may still be
// confirming (decisionBound). Before, it waited 30 minutes and voided on
// its own while the confirmation retried through a longer calendar outage:
// the calendar then confirmed, the capture signal found the saga ended,
// and the compensation cancelled the confirmed booking without a word.
const versionDecisionOutlastsConfirm = "decision-outlasts-confirm"

// paymentRequest is the payment saga's input; link mode adds what the
// link's message needs. Card runs send exactly what they always sent.
func (a *appointment) paymentRequest(ctx workflow.Context) deposit.Request {
	decision := 30 * time.Minute
	if a.versions.GetVersion(ctx, versionDecisionOutlastsConfirm, workflow.DefaultVersion, 1) >= 1 {
		decision = a.decisionBound()
	}
	if a.req.Terms != nil && a.req.Terms.DecisionTimeout > 0 {
		// The worker's PAYMENT_DECISION_TIMEOUT: the saga then asks
		// sooner whether the appointment still runs (VersionDecisionAwaitsParent).
		decision = a.req.Terms.DecisionTimeout
	}
	req := a.depositRequest()
	req.DecisionTimeout = decision
	if a.link {
		req.LinkTTL, req.Channel, req.Terms, req.Timezone = deposit.LinkTTL(a.req.LinkTTL), a.req.Channel, a.req.Terms, a.req.Timezone
	}
	return req
}

// depositRequest is what the booking's deposit is asked with, by card
// (deposit.CardOf) or by the payment saga (paymentRequest).
func (a *appointment) depositRequest() deposit.Request {
	return deposit.Request{
		Tenant: a.req.Tenant, Reference: a.state.Reference, Customer: a.req.Customer, Amount: a.req.DepositAmount,
		Currency: a.req.Currency, PaymentMethod: a.req.PaymentMethod, Description: "Deposit " + a.req.Service,
		Tuning: a.req.Tuning,
	}
}

// decisionBound is the longest the appointment may take from the
// authorisation to its decision: two rounds of confirming (the second
// after a hold expired), each retried for up to CompensationTimeout, each
// reconciled for up to ReconcileTimeout, and an hour for the rest. One
// bound for both sides: the payment saga voids on its own only once the
// appointment can no longer confirm.
func (a *appointment) decisionBound() time.Duration {
	return 2*(a.tuning.CompensationTimeout+a.tuning.ReconcileTimeout) + time.Hour
}

// authorizationTimeout is how long the appointment waits for the
// deposit: in link mode the link's whole lifetime on top.
func (a *appointment) authorizationTimeout() time.Duration {
	if a.link {
		return a.tuning.AuthorizationTimeout + deposit.LinkTTL(a.req.LinkTTL) + deposit.LinkSlack
	}
	return a.tuning.AuthorizationTimeout
}

// holdTTL is the hold's lifetime: the calendar's default, or in link
// mode as long as the link (and a margin).
func (a *appointment) holdTTL() time.Duration {
	if !a.link {
		return 0
	}
	return deposit.LinkTTL(a.req.LinkTTL) + deposit.LinkSlack + deposit.LinkHoldMargin
}

// tellLinkExpired tells a customer whose payment link lapsed that the
// slot is released and a new message gets a new link, and one whose link
// could not be made that nothing was booked. Only link-mode runs
// (deposit.VersionPaymentLink) get here.
func (a *appointment) tellLinkExpired(ctx workflow.Context, o *outcome) {
	if !a.link {
		return
	}
	id, kind, name, summary := "send-payment-expired", activities.MessageKindPaymentExpired, tenants.TemplatePaymentExpired,
		"Tell the customer the payment link expired"
	switch {
	case o.reason == deposit.ReasonLinkExpired:
	case strings.HasPrefix(o.reason, deposit.ReasonLinkUnavailable) &&
		a.versions.GetVersion(ctx, versionTellLinkUnavailable, workflow.DefaultVersion, 1) >= 1:
		id, kind, name, summary = "send-payment-unavailable", activities.MessageKindPaymentUnavailable, tenants.TemplatePaymentUnavailable,
			"Tell the customer no payment link could be made"
	default:
		return
	}
	step, err := workflows.SendMessage(ctx, a.tuning, id, summary, activities.ConfirmationInput{
		Tenant: a.req.Tenant, Reference: a.state.Reference, Channel: deposit.LinkChannel(a.req.Channel, a.req.Terms), Customer: a.req.Customer,
		Kind: kind, SendBy: a.req.SlotStart,
	}.Compose(a.req.Terms, name, a.slot(a.req.SlotStart)))
	a.record("send "+kind, id, step, err)
}
