package deposit

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// VersionPaymentLink: a deposit without a card (Request /
// BookingRequest PaymentMethod empty) is paid through a payment link.
// Runs recorded before it never had an empty card with a deposit; the
// version keeps any such run on the card path it took.
const VersionPaymentLink = "payment-link"

// DefaultLinkTTL is a payment link's lifetime when none is given, and the
// shortest allowed: Stripe refuses a Checkout Session that expires sooner.
const DefaultLinkTTL = 30 * time.Minute

// LinkSlack is added to the link's lifetime when the deadline is fixed, so
// that a create retried a little later (same key, same parameters) still
// lies within Stripe's 30-minute minimum.
const LinkSlack = 2 * time.Minute

// versionLinkCreateRounds: creating the link outlasts a provider outage
// in rounds (createLink); runs recorded before it made one bounded try.
const versionLinkCreateRounds = "payment-link-create-rounds"

// linkCreateWindow bounds when a new create round may start: every link
// it makes still expires before the hold it pays for (which lives
// LinkSlack + LinkHoldMargin past a link made at once).
const linkCreateWindow = LinkHoldMargin - LinkSlack

// ReasonLinkExpired is the reason of a booking whose payment link lapsed.
const ReasonLinkExpired = "payment_link_expired"

// ReasonLinkUnavailable starts the reason of a booking whose payment link
// could not be made; the provider's error follows.
const ReasonLinkUnavailable = "payment_link_unavailable"

// LinkTTL is the lifetime of the payment link of a request.
func LinkTTL(d workflows.Duration) workflows.Duration {
	if d < DefaultLinkTTL {
		return DefaultLinkTTL
	}
	return d
}

// linkMode reports whether this deposit is paid through a payment link.
func (p *payment) linkMode(ctx workflow.Context) bool {
	if p.req.PaymentMethod != "" || p.req.Amount <= 0 {
		return false
	}
	return workflow.GetVersion(ctx, VersionPaymentLink, workflow.DefaultVersion, 1) >= 1
}

// linkOutcome is how the wait for the customer's payment ended.
type linkOutcome int

const (
	linkPaid    linkOutcome = iota + 1 // the intent holds the deposit
	linkLapsed                         // the link is closed and nothing is held
	linkGivenUp                        // the appointment gave up or was cancelled
)

// runLink is the link-mode saga: create the link, send it, wait for the
// payment (events are hints, the provider's state decides), then continue
// as after a card authorisation.
func (p *payment) runLink(ctx workflow.Context) (State, error) {
	p.saga.Add("void deposit", func(ctx workflow.Context) error { return p.voidLink(ctx) })
	// Expired before the void runs (compensations run in reverse): once
	// the link is closed no payment can land behind the void.
	p.saga.Add("expire payment link", func(ctx workflow.Context) error { return p.expireLinkUndo(ctx) })
	link, err := p.createLink(ctx)
	if err != nil {
		// A session whose answer was lost was never sent: nobody holds its
		// URL (about 143 random bits), and it lapses on its own.
		uerr := p.undo(ctx)
		if uerr != nil && p.saga.Durable {
			return p.finish(ctx, Failed, "void: "+uerr.Error())
		}
		p.state.NothingHeld = uerr == nil
		return p.finish(ctx, Failed, ReasonLinkUnavailable+": "+err.Error())
	}
	p.state.SessionID, p.state.PaymentURL, p.state.PaymentExpiresAt = link.Session.ID, link.Session.URL, link.Session.ExpiresAt
	p.last = link
	p.set(ctx, AwaitingPayment, "payment link sent; waiting for the customer to pay")
	p.notifyParent(ctx)
	if p.givenUpBeforeTheLink(ctx) {
		return p.giveUp(ctx)
	}
	p.sendLink(ctx)
	res, out := p.awaitPayment(ctx)
	switch out {
	case linkPaid:
		p.state.IntentID = res.Intent.ID
		return p.authorized(ctx)
	case linkLapsed:
		if uerr := p.undo(ctx); uerr != nil && p.saga.Durable {
			return p.finish(ctx, Failed, "void: "+uerr.Error())
		}
		return p.finish(ctx, Expired, ReasonLinkExpired)
	}
	return p.giveUp(ctx)
}

// versionNoLinkAfterCancel: a booking cancelled while its payment link
// was being made (the payment API slow or down) sends no link. Before,
// the link went out after the customer had read "Wir stornieren Ihre
// noch nicht bestätigte Buchung" (the 100-booking drill, once).
const versionNoLinkAfterCancel = "no-link-after-cancel"

// givenUpBeforeTheLink reports whether the appointment asked to void (or
// was cancelled) while the link was made: the decision waits in its
// channel until the payment wait would have read it.
func (p *payment) givenUpBeforeTheLink(ctx workflow.Context) bool {
	if workflow.GetVersion(ctx, versionNoLinkAfterCancel, workflow.DefaultVersion, 1) < 1 {
		return false
	}
	decisions := workflow.GetSignalChannel(ctx, SignalDecision)
	var a Action
	for decisions.ReceiveAsync(&a) {
		p.voidAsked = p.voidAsked || a == Void
	}
	return ctx.Err() != nil || p.voidAsked
}

// VersionVoidUnpaidLink: the link saga's void trusts the link's session
// over a search. Before, a link that closed unpaid was voided by a search
// for the deposit, which against a search that lags (Stripe's) can never
// prove that nothing was paid: the compensation retried for ever.
const VersionVoidUnpaidLink = "void-unpaid-link"

// voidLink is the link saga's void. In link mode only the session's
// payment creates an intent, and the session, read by its ID, is
// consistent where a search is not: a session that expired without a
// payment, or a link never created (nobody holds its URL), proves that
// there is no deposit; a session that names its intent gives the ID to
// void. Otherwise the void looks the deposit up as before.
func (p *payment) voidLink(ctx workflow.Context) error {
	if p.state.IntentID == "" && workflow.GetVersion(ctx, VersionVoidUnpaidLink, workflow.DefaultVersion, 1) >= 1 {
		switch {
		case p.last.HasIntent && p.last.Intent.ID != "":
			p.state.IntentID = p.last.Intent.ID
		case p.state.SessionID == "" || p.last.Session.Status == activities.SessionExpired:
			p.state.Steps = append(p.state.Steps, workflows.Step{Name: "void deposit", Result: "nothing to void: the payment link closed unpaid"})
			return nil
		}
	}
	return p.void(ctx)
}

// giveUp closes the link of an appointment that gave up, then voids (or
// refunds) whatever was paid by reference. A payment that landed before
// the link closed is returned and the customer told, once.
func (p *payment) giveUp(ctx workflow.Context) (State, error) {
	if p.state.IntentID == "" && p.last.Intent.ID != "" &&
		workflow.GetVersion(ctx, VersionVoidKnownIntent, workflow.DefaultVersion, 1) >= 1 {
		p.state.IntentID = p.last.Intent.ID // paid too late: void by its ID, not by a search
	}
	err := p.undo(ctx)
	if p.last.Authorized() {
		// Owed to the customer whenever it lands: no moment after which it is late.
		p.tell(ctx, "send-payment-late-refund", activities.MessageKindPaymentLateRefund, tenants.TemplatePaymentRefundedLate, time.Time{})
	}
	if err != nil && p.saga.Durable {
		return p.finish(ctx, Failed, "void: "+err.Error())
	}
	reason := "cancelled"
	if p.voidAsked {
		reason = "voided by the appointment"
	}
	return p.finish(ctx, Voided, reason)
}

// versionRereadLink: a payment event whose read of the link failed is
// read again after a pause, until a read answers. Before, the failed read
// was left to the link's deadline: a customer who paid while the payment
// API's database failed over heard nothing for up to half an hour (the
// chaos drill's outage: about 20 links).
const versionRereadLink = "reread-payment-link"

// awaitPayment waits for a payment event, the link's deadline, or the
// appointment giving up. Every event is only a reason to read the link.
func (p *payment) awaitPayment(ctx workflow.Context) (activities.PaymentLinkResult, linkOutcome) {
	events := workflow.GetSignalChannel(ctx, SignalEvent)
	decisions := workflow.GetSignalChannel(ctx, SignalDecision)
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	wait := p.state.PaymentExpiresAt.Sub(workflow.Now(ctx))
	if wait < time.Second {
		wait = time.Second
	}
	deadline := workflow.NewTimer(timerCtx, wait)
	var reread workflow.Future // armed while a failed read waits to be repeated
	for {
		var read, lapsed bool
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(events, func(c workflow.ReceiveChannel, _ bool) {
			var ev Event
			c.Receive(ctx, &ev)
			read = true
			workflow.GetLogger(ctx).Info("payment event", "event", ev.EventID, "type", ev.Type)
		})
		sel.AddFuture(deadline, func(workflow.Future) { lapsed = true })
		if reread != nil {
			sel.AddFuture(reread, func(workflow.Future) { read, reread = true, nil })
		}
		sel.AddReceive(decisions, func(c workflow.ReceiveChannel, _ bool) {
			var a Action
			c.Receive(ctx, &a)
			p.voidAsked = p.voidAsked || a == Void
		})
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		switch {
		case ctx.Err() != nil || p.voidAsked:
			return p.last, linkGivenUp
		case lapsed:
			return p.reconcile(ctx)
		case read:
			res, err := p.readLink(ctx)
			if err != nil {
				if reread == nil && workflow.GetVersion(ctx, versionRereadLink, workflow.DefaultVersion, 1) >= 1 {
					reread = workflow.NewTimer(timerCtx, p.tuning.CompensationMaxInterval)
				}
				continue // an unread link is no answer: read it again later
			}
			if res.Authorized() {
				return res, linkPaid
			}
			if res.Session.Status == activities.SessionExpired {
				return res, linkLapsed
			}
			// Declined, or paying: the page stays open for another card.
		}
	}
}

// reconcile decides at the link's deadline. No webhook is no proof: read
// the link first; close one that is still open; a link paid meanwhile
// (the expiry finds it complete) is a payment like any other.
func (p *payment) reconcile(ctx workflow.Context) (activities.PaymentLinkResult, linkOutcome) {
	workflow.SetCurrentDetails(ctx, "payment link deadline: reading the link")
	res, err := p.readLink(ctx)
	if err == nil && res.Authorized() {
		return res, linkPaid
	}
	if err == nil && res.Session.Status != activities.SessionOpen {
		return res, linkLapsed
	}
	res, err = p.expireLink(ctx, "expire-payment-link", workflows.CompensationCtx)
	switch {
	case err == nil && res.Authorized():
		return res, linkPaid
	case err != nil:
		// The link could not be closed: the compensation tries again and
		// voids by reference whatever was paid.
		workflow.GetLogger(ctx).Error("expire payment link", "error", err)
	}
	return res, linkLapsed
}

// LinkHoldMargin keeps a link-mode hold alive a little past the link, so
// a payment at the last second still finds its slot held.
const LinkHoldMargin = 5 * time.Minute

// VersionVoidKnownIntent: compensations that void a deposit pass the
// intent ID they know, so no search (which lags on Stripe) decides
// whether money stays captured.
const VersionVoidKnownIntent = "void-known-intent"
