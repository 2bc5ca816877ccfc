package stack_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
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

// TestTenantWithItsOwnSecretKeepsOneEndpoint: a tenant given a webhook
// secret of its own (STRIPE_WEBHOOK_SECRETS) gets its configured endpoint
// moved to STRIPE_WEBHOOK_URL/<tenant>, the gateway's route for it, and
// signed with that secret; taken away, it moves back. It stays one
// endpoint throughout, so no event is delivered twice, and the other
// tenants keep the shared one.
func TestTenantWithItsOwnSecretKeepsOneEndpoint(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	testsupport.TwoTenants(t, pool)
	reg := testsupport.Tenants(t, pool)
	const shared = "http://127.0.0.1:9/webhooks/stripe"
	steps := []struct {
		name    string
		secrets map[string]string
		want    map[string]endpoint
	}{
		{"shared", nil, map[string]endpoint{"demo": {shared, "whsec_test"}, testsupport.LondonTenant: {shared, "whsec_test"}}},
		{"london's own", map[string]string{testsupport.LondonTenant: "whsec_london"},
			map[string]endpoint{"demo": {shared, "whsec_test"}, testsupport.LondonTenant: {shared + "/london", "whsec_london"}}},
		{"shared again", nil, map[string]endpoint{"demo": {shared, "whsec_test"}, testsupport.LondonTenant: {shared, "whsec_test"}}},
	}
	for _, step := range steps {
		cfg := testsupport.Config(t)
		cfg.StripeWebhookURL, cfg.StripeWebhookSecret, cfg.StripeWebhookSecrets = shared, "whsec_test", step.secrets
		_, err := stack.PaymentsWebhooks(cfg, pool, reg, slog.New(slog.NewTextHandler(io.Discard, nil))).Pass(ctx) // a restart
		require.NoError(t, err, step.name)
		got := configuredEndpoints(t, pool)
		require.Equal(t, step.want, got, step.name)
	}
}

// endpoint is where a configured webhook endpoint delivers, and with
// which secret.
type endpoint struct{ url, secret string }

// configuredEndpoints lists the configured webhook endpoints by tenant;
// a tenant with more than one fails the test.
func configuredEndpoints(t *testing.T, pool *pgxpool.Pool) map[string]endpoint {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT tenant_id, url, secret FROM webhook_endpoints WHERE id LIKE 'we_config_%' ORDER BY tenant_id`)
	require.NoError(t, err)
	defer rows.Close()
	got := map[string]endpoint{}
	for rows.Next() {
		var tenant string
		var e endpoint
		require.NoError(t, rows.Scan(&tenant, &e.url, &e.secret))
		require.NotContains(t, got, tenant, "one configured endpoint per tenant")
		got[tenant] = e
	}
	require.NoError(t, rows.Err())
	return got
}
