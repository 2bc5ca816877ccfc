package ops_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPageListsUnmatchedPaymentEvents: payment webhooks that matched no
// payment workflow are listed for their tenant, and those naming no known
// tenant for every tenant; another tenant's, and payment events that were
// delivered, are not.
func TestPageListsUnmatchedPaymentEvents(t *testing.T) {
	f := newFixture(t)
	_, err := f.pool.Exec(context.Background(), `INSERT INTO inbox_events (provider, event_id, tenant_id, kind, customer, channel, payload, state) VALUES
		('stripe', 'evt_mine', $1, 'checkout.session.completed', '', 'payment', '{"reference":"appointment:t1:in_late"}', 'unmatched'),
		('stripe', 'evt_nobodys', '-', 'payment_intent.canceled', '', 'payment', '{"reference":"bogus `+phone+`"}', 'unmatched'),
		('stripe', 'evt_theirs', $2, 'checkout.session.completed', '', 'payment', '{"reference":"appointment:t2:in_x"}', 'unmatched'),
		('stripe', 'evt_fine', $1, 'checkout.session.completed', '', 'payment', '{"reference":"appointment:t1:in_ok"}', 'delivered')`, tenant, other)
	require.NoError(t, err)

	res, body := get(t, http.DefaultClient, f.srv.URL+"/ops", token)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.Contains(t, body, `id="unmatched-evt_mine"`)
	require.Contains(t, body, "appointment:t1:in_late")
	require.Contains(t, body, `id="unmatched-evt_nobodys"`)
	require.Contains(t, body, "(no known tenant)")
	require.NotContains(t, body, phone, "a number in a reference is masked")
	require.NotContains(t, body, "evt_theirs")
	require.NotContains(t, body, "evt_fine")
	require.Contains(t, body, "Unmatched payment events (2)")
}

// TestPageListsDisabledWebhookEndpoints: the tenant's webhook endpoints
// that are disabled are listed with why, their host (never the path or
// query, which may carry a token) and the events held for them; enabled
// ones and another tenant's are not.
func TestPageListsDisabledWebhookEndpoints(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.pool.Exec(ctx, `INSERT INTO webhook_endpoints (id, tenant_id, url, secret, enabled_events, created_at, status, disabled_reason, disabled_at) VALUES
		('we_broken', $1, 'https://hooks.shop.example/stripe?token=s3cr3t', 'whsec_mine', '{*}', now(), 'disabled', 'failing', now()),
		('we_fine', $1, 'https://ok.example/', 'whsec_fine', '{*}', now(), 'enabled', NULL, NULL),
		('we_theirs', $2, 'https://theirs.example/', 'whsec_theirs', '{*}', now(), 'disabled', 'user', now())`, tenant, other)
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `INSERT INTO events (id, tenant_id, type, object_id, object, created_at) VALUES
		('evt_held', $1, 'checkout.session.completed', 'cs_test_x', '{}', now())`, tenant)
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at, held) VALUES ('we_broken', 'evt_held', now(), 'endpoint_disabled')`)
	require.NoError(t, err)

	res, body := get(t, http.DefaultClient, f.srv.URL+"/ops", token)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.Contains(t, body, "Disabled webhook endpoints (1)")
	require.Contains(t, body, `id="disabled-we_broken"`)
	require.Contains(t, body, "hooks.shop.example")
	require.Contains(t, body, "kept failing")
	require.Regexp(t, `id="disabled-we_broken">.*<td class="num">1</td>`, body)
	require.NotContains(t, body, "s3cr3t")
	require.NotContains(t, body, "whsec_")
	require.NotContains(t, body, "we_fine")
	require.NotContains(t, body, "we_theirs")
}
