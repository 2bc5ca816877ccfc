package activities_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/payments"
)

// TestPaymentLinkPaidBeforeExpiry: a link paid just before the saga
// expires it is not lost: the expiry answers "unexpected state" and the
// activity reads the session, whose intent holds the deposit.
func TestPaymentLinkPaidBeforeExpiry(t *testing.T) {
	pool := testsupport.Database(t)
	api := stacktest.PaymentsAPI(t, testsupport.Config(t), pool)
	gw := payments.NewStripeGateway(api.URL, config.DefaultAPIToken, &http.Client{Timeout: 10 * time.Second})
	acts := &activities.Activities{Payments: func(string) (payments.Gateway, error) { return gw, nil }}
	var suite testsuite.WorkflowTestSuite
	run := func(fn any, in any) activities.PaymentLinkResult {
		t.Helper()
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(acts)
		v, err := env.ExecuteActivity(fn, in)
		require.NoError(t, err)
		var res activities.PaymentLinkResult
		require.NoError(t, v.Get(&res))
		return res
	}
	created := run(acts.CreatePaymentLink, activities.PaymentLinkInput{
		Tenant: "demo", Reference: "appointment:demo:link1", Amount: 2000, Currency: "eur", Product: "Deposit tire-change",
		Merchant: "Demo", ExpiresAt: time.Now().Add(40 * time.Minute).Truncate(time.Second), Locale: "de",
	})
	require.Equal(t, payments.SessionOpen, created.Session.Status)
	var success string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT success_url FROM checkout_sessions WHERE id = $1`, created.Session.ID).Scan(&success))
	require.Equal(t, "https://example.com/paid", success, "a worker without a return URL still sends a valid one")

	res, err := http.PostForm(created.Session.URL, url.Values{"payment_method": {"pm_card_visa"}})
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)

	expired := run(acts.ExpirePaymentLink, activities.LinkInput{Tenant: "demo", SessionID: created.Session.ID})
	require.Equal(t, payments.SessionComplete, expired.Session.Status, "paid first: not expired")
	require.True(t, expired.Authorized())
	require.Equal(t, "appointment:demo:link1", expired.Intent.Reference)
	read := run(acts.GetPaymentLink, activities.LinkInput{Tenant: "demo", SessionID: created.Session.ID})
	require.Equal(t, expired.Intent.ID, read.Intent.ID)
	require.True(t, read.Authorized())
}
