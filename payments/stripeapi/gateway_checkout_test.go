package stripeapi_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/payments"
)

func linkCheckout(ref string, expires time.Time) payments.Checkout {
	return payments.Checkout{
		Amount: 2000, Currency: "eur", Reference: ref, Step: "deposit", Product: "Deposit tire change",
		Merchant: "Reifen Müller", SuccessURL: "https://example.com/paid", ExpiresAt: expires, Locale: "de",
	}
}

// A payment link through the gateway: created once per key, paid on the
// page, read with its live intent; expiring it afterwards is a decided
// "unexpected state", and the intent is the deposit found by reference.
func TestGatewayCheckoutPaidThenExpireRefused(t *testing.T) {
	t.Parallel()
	e, clk := newClockEnv(t)
	ctx := context.Background()
	expires := clk.Now().Add(time.Hour).Truncate(time.Second)

	var s payments.Session
	for range 2 {
		got, err := e.gw.CreateCheckout(ctx, "wf-link/run/create", linkCheckout("wf-link", expires))
		require.NoError(t, err)
		if s.ID != "" {
			require.Equal(t, s, got, "a retry answers the same session")
		}
		s = got
	}
	require.Equal(t, payments.SessionOpen, s.Status)
	require.Equal(t, "unpaid", s.PaymentStatus)
	require.Empty(t, s.IntentID)
	require.Equal(t, expires.UTC(), s.ExpiresAt)
	require.NotEmpty(t, s.URL)
	require.Equal(t, 1, e.count("checkout_sessions", ""))

	require.Equal(t, 200, e.payForm(s.URL, url.Values{"payment_method": {"pm_card_visa"}}).status)
	got, err := e.gw.GetCheckout(ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, payments.SessionComplete, got.Status)
	require.Empty(t, got.URL, "no URL once the session is not open")
	require.NotEmpty(t, got.IntentID)
	pi, err := e.gw.GetIntent(ctx, got.IntentID)
	require.NoError(t, err)
	require.Equal(t, payments.StatusRequiresCapture, pi.Status)
	require.Equal(t, "wf-link", pi.Reference)
	require.Equal(t, "deposit", pi.Step)
	found, ok, err := e.gw.FindByReference(ctx, "wf-link", "deposit")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, pi.ID, found.ID, "the link's intent is the booking step's deposit")

	_, err = e.gw.ExpireCheckout(ctx, "wf-link/run/expire", s.ID)
	require.Equal(t, outcome.Final, outcome.Of(err))
	require.Equal(t, payments.CodeSessionUnexpectedState, payments.CodeOf(err))
}

// Expiring an open link closes it for good: the page refuses payment and
// no intent exists; a retry with the key answers the same session.
func TestGatewayCheckoutExpired(t *testing.T) {
	t.Parallel()
	e, clk := newClockEnv(t)
	ctx := context.Background()
	s, err := e.gw.CreateCheckout(ctx, "wf-exp/run/create", linkCheckout("wf-exp", clk.Now().Add(time.Hour)))
	require.NoError(t, err)
	for range 2 {
		got, err := e.gw.ExpireCheckout(ctx, "wf-exp/run/expire", s.ID)
		require.NoError(t, err)
		require.Equal(t, payments.SessionExpired, got.Status)
	}
	require.Equal(t, 410, e.payForm(s.URL, url.Values{"payment_method": {"pm_card_visa"}}).status)
	require.Equal(t, 0, e.count("payment_intents", ""))

	_, err = e.gw.GetCheckout(ctx, "cs_test_missing")
	require.Equal(t, outcome.Final, outcome.Of(err))
	_, err = e.gw.CreateCheckout(ctx, "", linkCheckout("wf-exp", clk.Now().Add(time.Hour)))
	require.Equal(t, outcome.Final, outcome.Of(err), "no call without a key")
	_, err = e.gw.CreateCheckout(ctx, "wf-exp/run/short", linkCheckout("wf-exp-2", clk.Now().Add(time.Minute)))
	require.Equal(t, outcome.Final, outcome.Of(err), "Stripe's 30-minute minimum")
}
