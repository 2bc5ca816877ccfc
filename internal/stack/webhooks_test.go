package stack_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestEveryTenantGetsTheConfiguredWebhookEndpoint: the payment process
// holds no shop's plain token (BOOKONCE_API_TOKENS names only the demo
// tenant here), yet every tenant of the registry gets the configured
// endpoint (STRIPE_WEBHOOK_URL, the gateway), also one applied while it
// runs. Before, only the tenants of BOOKONCE_API_TOKENS had one, so a
// second shop's payment events never reached the gateway and its links
// were never confirmed by webhook.
func TestEveryTenantGetsTheConfiguredWebhookEndpoint(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.StripeWebhookURL, cfg.StripeWebhookSecret = "http://127.0.0.1:9/webhooks/stripe", "whsec_test"
	reg := testsupport.Tenants(t, pool)
	d := stack.PaymentsWebhooks(cfg, pool, reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	count := func() map[string]int {
		out := map[string]int{}
		rows, err := pool.Query(ctx, `SELECT tenant_id, count(*) FROM webhook_endpoints WHERE id LIKE 'we_config_%' GROUP BY tenant_id`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var tenant string
			var n int
			require.NoError(t, rows.Scan(&tenant, &n))
			out[tenant] = n
		}
		require.NoError(t, rows.Err())
		return out
	}
	_, err := d.Pass(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"demo": 1}, count())

	testsupport.TwoTenants(t, pool) // a shop applied while the API runs
	require.NoError(t, reg.Reload(ctx))
	_, err = d.Pass(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"demo": 1, testsupport.LondonTenant: 1}, count())
}
