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
