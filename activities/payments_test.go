package activities_test

import (
	"context"
	"net/http"
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

// TestVoidOfACapturedDepositRefundsOnce: the compensation of a deposit
// whose capture happened after all (its answer was lost) gives the money
// back, and running the compensation again refunds nothing more.
func TestVoidOfACapturedDepositRefundsOnce(t *testing.T) {
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	api := stacktest.PaymentsAPI(t, cfg, pool)
	gw := payments.NewStripeGateway(api.URL, config.DefaultAPIToken, &http.Client{Timeout: 10 * time.Second})
	ctx := context.Background()
	pi, err := gw.Authorize(ctx, "auth-key", payments.Authorization{Amount: 2000, Currency: "eur", Reference: "appointment:demo:r1",
		Step: activities.DepositStep, PaymentMethod: "pm_card_visa"})
	require.NoError(t, err)
	_, err = gw.Capture(ctx, "capture-key", pi.ID)
	require.NoError(t, err)

	acts := &activities.Activities{Payments: func(string) (payments.Gateway, error) { return gw, nil }}
	var suite testsuite.WorkflowTestSuite
	for range 2 {
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(acts)
		_, err := env.ExecuteActivity(acts.VoidDeposit, activities.IntentInput{Tenant: "demo", Reference: "appointment:demo:r1", IntentID: pi.ID})
		require.NoError(t, err)
	}
	var refunds, refunded int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM refunds`).Scan(&refunds))
	require.NoError(t, pool.QueryRow(ctx, `SELECT amount_refunded FROM payment_intents WHERE id = $1`, pi.ID).Scan(&refunded))
	require.Equal(t, int64(1), refunds, "one refund, however often the compensation runs")
	require.Equal(t, int64(2000), refunded)
}
