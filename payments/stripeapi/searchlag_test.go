package stripeapi_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"

	"github.com/bookonce/bookonce/payments/stripeapi"
)

// SearchLag: search misses an intent created within the lag (by the
// server's clock) and finds it once the lag has passed; the limit and
// has_more count only what is found; list and retrieve see it at once, as
// at Stripe. Only creation lags: a status change of an older intent is
// searchable at once.
func TestSearchLag(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		lag     time.Duration
		advance time.Duration // after creating the new intent
		found   bool
	}{
		{"no lag: consistent", 0, 0, true},
		{"just created", time.Minute, 0, false},
		{"a second before the lag has passed", time.Minute, 59 * time.Second, false},
		{"exactly the lag later", time.Minute, time.Minute, true},
		{"an incident's lag", time.Hour, 30 * time.Minute, false},
		{"the incident's lag passed", time.Hour, 61 * time.Minute, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClock()
			e := newEnvWith(t, func(s *stripeapi.Server) { s.Now, s.SearchLag = c.Now, tc.lag })
			ctx := t.Context()
			old, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-lag-old", "wf-lag-old", 1000, "pm_card_visa"))
			require.NoError(t, err)
			c.advance(tc.lag) // the old intent is indexed by now
			fresh, err := e.sc.V1PaymentIntents.Create(ctx, createParams("k-lag-new", "wf-lag-new", 1001, "pm_card_visa"))
			require.NoError(t, err)
			c.advance(tc.advance)

			want := []string{old.ID}
			if tc.found {
				want = []string{fresh.ID, old.ID}
			}
			require.Equal(t, want, e.searchIDs(`status:'requires_capture'`, 10))
			if tc.found {
				require.Equal(t, []string{fresh.ID}, e.searchIDs(`metadata['booking_reference']:'wf-lag-new'`, 10))
			} else {
				require.Empty(t, e.searchIDs(`metadata['booking_reference']:'wf-lag-new'`, 10))
			}
			ids, hasMore := e.searchPage(`status:'requires_capture'`, 1)
			require.Equal(t, want[:1], ids, "the lag is in the query, before the limit")
			require.Equal(t, tc.found, hasMore)

			_, found, err := e.gw.FindByReference(ctx, "wf-lag-new", "deposit")
			require.NoError(t, err)
			require.Equal(t, tc.found, found, "the gateway's lookup lags alike")

			var listed []string
			for pi, err := range e.sc.V1PaymentIntents.List(ctx, &stripe.PaymentIntentListParams{}) {
				require.NoError(t, err)
				listed = append(listed, pi.ID)
			}
			require.Equal(t, []string{fresh.ID, old.ID}, listed, "list is consistent")
			got, err := e.sc.V1PaymentIntents.Retrieve(ctx, fresh.ID, nil)
			require.NoError(t, err)
			require.Equal(t, fresh.ID, got.ID, "retrieve is consistent")

			cp := &stripe.PaymentIntentCancelParams{}
			cp.SetIdempotencyKey("k-lag-cancel-old")
			_, err = e.sc.V1PaymentIntents.Cancel(ctx, old.ID, cp)
			require.NoError(t, err)
			require.Equal(t, []string{old.ID}, e.searchIDs(`status:'canceled'`, 10), "changes do not lag")
		})
	}
}

// searchIDs runs a search through stripe-go, all pages, and returns the IDs.
func (e *env) searchIDs(q string, limit int64) []string {
	e.t.Helper()
	p := &stripe.PaymentIntentSearchParams{}
	p.Query = q
	p.Limit = stripe.Int64(limit)
	var out []string
	for pi, err := range e.sc.V1PaymentIntents.Search(e.t.Context(), p) {
		require.NoError(e.t, err)
		out = append(out, pi.ID)
	}
	return out
}

// searchPage is one raw page of a search: its IDs and has_more.
func (e *env) searchPage(q string, limit int) ([]string, bool) {
	e.t.Helper()
	r := e.do(http.MethodGet, "/v1/payment_intents/search?limit="+strconv.Itoa(limit)+"&query="+url.QueryEscape(q), "", secretKey, "")
	require.Equal(e.t, http.StatusOK, r.status, "%s", r.body)
	var ids []string
	for _, o := range r.object["data"].([]any) {
		ids = append(ids, o.(map[string]any)["id"].(string))
	}
	return ids, r.object["has_more"].(bool)
}
