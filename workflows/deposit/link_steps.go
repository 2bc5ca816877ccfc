package deposit

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// createLink creates the payment link. Each round fixes the link's expiry
// when it starts, so that its retries send the same parameters under the
// same key; rounds go on through an outage while a link still fits in the
// hold (linkCreateWindow), and only then does the booking fail.
func (p *payment) createLink(ctx workflow.Context) (activities.PaymentLinkResult, error) {
	if workflow.GetVersion(ctx, versionLinkCreateRounds, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return p.createLinkRound(ctx, "create-payment-link", workflows.ActivityCtx)
	}
	first := workflow.Now(ctx)
	for round := 1; ; round++ {
		id := "create-payment-link"
		if round > 1 {
			id = fmt.Sprintf("create-payment-link-%d", round)
		}
		res, err := p.createLinkRound(ctx, id, linkRoundCtx)
		if err == nil || workflows.IsFinal(err) || workflow.Now(ctx).Sub(first) >= linkCreateWindow {
			return res, err
		}
		// The round's key is spent (its expiry would now fall short of
		// Stripe's minimum). A session it may have created was never sent:
		// nobody holds its URL, so a new key cannot charge twice.
		workflow.GetLogger(ctx).Warn("payment link not created; next round with a new key", "round", round, "error", err)
	}
}

// createLinkRound creates the link under one activity key, with an expiry
// fixed when the round starts.
func (p *payment) createLinkRound(ctx workflow.Context, id string, opts func(workflow.Context, workflows.Tuning, string, string) workflow.Context) (activities.PaymentLinkResult, error) {
	in := activities.PaymentLinkInput{
		Tenant: p.req.Tenant, Reference: p.req.Reference, Amount: p.req.Amount, Currency: p.req.Currency,
		Product: p.req.Description, Merchant: p.merchant(), Locale: string(p.req.Terms.Lang()),
		ExpiresAt: workflow.Now(ctx).Add(LinkTTL(p.req.LinkTTL) + LinkSlack).UTC().Truncate(time.Second),
	}
	var res activities.PaymentLinkResult
	err := workflow.ExecuteActivity(opts(ctx, p.tuning, id, fmt.Sprintf("Payment link %d %s", p.req.Amount, p.req.Currency)),
		act.CreatePaymentLink, in).Get(ctx, &res)
	p.record("create payment link", id, res.Step, err)
	return res, err
}

// linkRoundCtx retries one create key for as long as its expiry stays
// within Stripe's 30-minute minimum (LinkSlack), however often: a payment
// provider's outage of a minute delays the link instead of failing it.
func linkRoundCtx(ctx workflow.Context, t workflows.Tuning, id, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:             id,
		Summary:                summary,
		StartToCloseTimeout:    t.ActivityTimeout,
		ScheduleToCloseTimeout: LinkSlack,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    workflows.InitialRetryInterval,
			BackoffCoefficient: 2,
			MaximumInterval:    t.MaxRetryInterval,
			MaximumAttempts:    0, // the schedule-to-close bound ends the round
		},
	})
}

// merchant is the name the payment page shows.
func (p *payment) merchant() string {
	if p.req.Terms != nil && p.req.Terms.Name != "" {
		return p.req.Terms.Name
	}
	return p.req.Tenant
}

// readLink reads the link and its intent (each read its own activity).
func (p *payment) readLink(ctx workflow.Context) (activities.PaymentLinkResult, error) {
	p.reads++
	id := fmt.Sprintf("read-payment-link-%d", p.reads)
	var res activities.PaymentLinkResult
	err := workflow.ExecuteActivity(workflows.ActivityCtx(ctx, p.tuning, id, "Read payment link "+p.state.SessionID),
		act.GetPaymentLink, activities.LinkInput{Tenant: p.req.Tenant, SessionID: p.state.SessionID}).Get(ctx, &res)
	if err != nil {
		p.record("read payment link", id, res.Step, err)
		return res, err
	}
	p.last = res
	return res, nil
}

// expireLink closes the link; one no longer open is read instead.
func (p *payment) expireLink(ctx workflow.Context, id string, opts func(workflow.Context, workflows.Tuning, string, string) workflow.Context) (activities.PaymentLinkResult, error) {
	var res activities.PaymentLinkResult
	err := workflow.ExecuteActivity(opts(ctx, p.tuning, id, "Expire payment link "+p.state.SessionID),
		act.ExpirePaymentLink, activities.LinkInput{Tenant: p.req.Tenant, SessionID: p.state.SessionID}).Get(ctx, &res)
	p.record("expire payment link", id, res.Step, err)
	if err == nil {
		p.last = res
	}
	return res, err
}

// expireLinkUndo is the link's compensation: nothing to do without a link
// or for one already known to be closed.
func (p *payment) expireLinkUndo(ctx workflow.Context) error {
	if p.state.SessionID == "" || p.last.Session.Status != activities.SessionOpen {
		return nil
	}
	_, err := p.expireLink(ctx, "expire-payment-link-undo", p.saga.Opts)
	return err
}

// sendLink sends the link through the outbox, once per booking. A failure
// is visible in the steps; the deadline still reconciles the link.
func (p *payment) sendLink(ctx workflow.Context) {
	p.tell(ctx, "send-payment-link", activities.MessageKindPaymentLink, tenants.TemplatePaymentLink, p.state.PaymentExpiresAt)
}

// tell sends the customer one payment message of kind.
func (p *payment) tell(ctx workflow.Context, id, kind string, name tenants.TemplateName, sendBy time.Time) {
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	lang := p.req.Terms.Lang()
	data := tenants.MessageData{
		Amount: tenants.Money{Amount: p.req.Amount, Currency: p.req.Currency}.Format(lang), Link: p.state.PaymentURL,
		Until: until(p.state.PaymentExpiresAt, p.timezone()),
	}
	step, err := workflows.SendMessage(dctx, p.tuning, id, "Send "+kind, activities.ConfirmationInput{
		Tenant: p.req.Tenant, Reference: p.req.Reference, Channel: LinkChannel(p.req.Channel, p.req.Terms), Customer: p.req.Customer,
		Kind: kind, SendBy: sendBy,
	}.Compose(p.req.Terms, name, data))
	p.record("send "+kind, id, step, err)
}

func (p *payment) timezone() string {
	if p.req.Timezone != "" {
		return p.req.Timezone
	}
	if p.req.Terms != nil {
		return p.req.Terms.Timezone
	}
	return ""
}

// LinkChannel is where a payment link goes: for a caller WhatsApp (a link
// cannot be spoken; a number without WhatsApp gets it by SMS after all,
// outbox.FallbackSuffix), or SMS where the shop's policy says so
// (policies.caller_links); else where the customer is answered.
func LinkChannel(c workflows.Channel, t *tenants.Terms) string {
	if c == workflows.ChannelVoice && (t == nil || t.CallerLinks != "sms") {
		return string(workflows.ChannelWhatsApp)
	}
	return workflows.ReplyChannel(c)
}

// until is a deadline's local time of day in the time zone tz (UTC when
// unknown): links live minutes to hours, so the hour is what matters.
func until(t time.Time, tz string) string {
	loc, err := time.LoadLocation(tz)
	if tz == "" || err != nil {
		return t.UTC().Format("15:04") + " UTC"
	}
	return t.In(loc).Format("15:04")
}
