package appointment_test

// The payment-link part of the unit tests' fake downstream: one Checkout
// Session and its intent, as the payment API would report them.

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
)

// unitLink is the fake's payment link: a session status and the status of
// the intent the page created ("" = none yet).
type unitLink struct {
	session payments.Session
	intent  string
	created int
	// down, when set and true, is the payment API being unreachable: a
	// create fails as an unknown outcome would.
	down func() bool
	// readDown, when set and true, makes reading the link fail so.
	readDown func() bool
}

// pay makes the customer pay on the page (authorised, manual capture).
func (f *unitFake) pay() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.link.session.Status != payments.SessionOpen {
		return // an expired page takes no payment
	}
	f.link.session.Status, f.link.intent = payments.SessionComplete, payments.StatusRequiresCapture
	f.SetLive(true)
}

// decline makes a card fail on the page: the session stays open.
func (f *unitFake) decline() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.link.intent = payments.StatusRequiresPaymentMethod
}

func (f *unitFake) linkResult(ctx context.Context) activities.PaymentLinkResult {
	s := f.link.session
	res := activities.PaymentLinkResult{Step: workflowtest.Step(ctx, s.ID), Session: s}
	if f.link.intent != "" {
		res.Session.IntentID = "pi_link"
		intent := f.link.intent
		if f.link.intent == payments.StatusRequiresCapture && !f.Live() {
			intent = payments.StatusCanceled // voided (or captured) since
		}
		res.Intent, res.HasIntent = payments.Intent{ID: "pi_link", Status: intent, Amount: 2000, Currency: "eur"}, true
	}
	return res
}

// mockLinks registers the payment-link activities on the fake.
func (f *unitFake) mockLinks(env *testsuite.TestWorkflowEnvironment) {
	a := (*activities.Activities)(nil)
	env.OnActivity(a.CreatePaymentLink, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.PaymentLinkInput) (activities.PaymentLinkResult, error) {
			f.Note(ctx, in)
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.link.down != nil && f.link.down() {
				return activities.PaymentLinkResult{}, errors.New("payments create checkout: unknown outcome: connection refused")
			}
			f.link.created++
			f.link.session = payments.Session{ID: "cs_1", URL: "https://pay.example/pay/cs_1", Status: payments.SessionOpen,
				PaymentStatus: "unpaid", ExpiresAt: in.ExpiresAt}
			return f.linkResult(ctx), nil
		})
	env.OnActivity(a.GetPaymentLink, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.LinkInput) (activities.PaymentLinkResult, error) {
			f.Note(ctx, in)
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.link.readDown != nil && f.link.readDown() {
				return activities.PaymentLinkResult{}, errors.New("payments get checkout: 503 internal: database unavailable")
			}
			return f.linkResult(ctx), nil
		})
	env.OnActivity(a.ExpirePaymentLink, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.LinkInput) (activities.PaymentLinkResult, error) {
			f.Note(ctx, in)
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.link.session.Status == payments.SessionOpen {
				f.link.session.Status, f.link.session.URL = payments.SessionExpired, ""
			}
			return f.linkResult(ctx), nil
		})
}

// newUnitLinkEnv is newUnitEnv with the payment-link activities.
func newUnitLinkEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *unitFake) {
	env, f := newUnitEnv(t)
	f.mockLinks(env)
	return env, f
}
