package intent_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/customerid"
)

const customer = "+4915112345678"

// key is customer's key in tenant demo with the development secret.
var key = mustKey("demo", customer)

func mustKey(tenant, number string) customerid.Key {
	k, err := customerid.Dev().Key(tenant, number)
	if err != nil {
		panic(err)
	}
	return k
}

// keyedID is c's keyed ID, which must exist.
func keyedID(t *testing.T, c intent.Canonical) string {
	t.Helper()
	id, err := c.ID()
	require.NoError(t, err)
	return id
}

// TestCanonicalIDsArePinned pins both IDs (the keyed ones checked once
// against an independent HMAC computation): the legacy one to the values
// workflows.IntentID computed before keys (runs in flight and dedup rows
// carry them), the keyed one to its first values (a change would orphan
// the bookings started under it).
func TestCanonicalIDsArePinned(t *testing.T) {
	tire := intent.Canonical{Tenant: "demo", Customer: customer, CustomerKey: key, Service: "tire-change", Start: at(2026, 12, 1, 14, 0)}
	stage := tire
	stage.Resource, stage.Start = "Bühne 1", time.Date(2026, 12, 1, 14, 0, 42, 7, berlin)
	cases := []struct {
		name          string
		c             intent.Canonical
		legacy, keyed string
	}{
		{"a wish", tire, "bf4ad95ffbb7651540a42ae1", "9468d328673a9f4c597a95b9"},
		{"with a resource, seconds and a zone", stage, "3b66b46a05230e25dd592631", "8d59528310091dedfa70b83f"},
		{"empty", intent.Canonical{}, "414178536d98d749dc1d9e2b", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.legacy, tc.c.LegacyID())
			id, err := tc.c.ID()
			if tc.keyed == "" {
				require.ErrorIs(t, err, intent.ErrNoCustomerKey)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.keyed, id)
		})
	}
}

// TestIDNeedsACustomerKey: without a key of customerid's form (none, or
// the number where the key belongs) there is no ID, never one of the
// plain number.
func TestIDNeedsACustomerKey(t *testing.T) {
	for _, k := range []customerid.Key{"", customerid.Key(customer), "not-a-key"} {
		id, err := intent.Canonical{Tenant: "demo", Customer: customer, CustomerKey: k, Service: "tire-change", Start: at(2026, 12, 1, 14, 0)}.ID()
		require.ErrorIs(t, err, intent.ErrNoCustomerKey, "%q", k)
		require.Empty(t, id)
	}
}

func TestCanonicalIDIgnoresZoneAndSeconds(t *testing.T) {
	c := intent.Canonical{Tenant: "demo", Customer: customer, CustomerKey: key, Service: "tire-change", Start: at(2026, 12, 1, 14, 0)}
	utc := c
	utc.Start = time.Date(2026, 12, 1, 13, 0, 59, 999, time.UTC)
	require.Equal(t, keyedID(t, c), keyedID(t, utc))
	require.Len(t, keyedID(t, c), 24)
	number := c
	number.Customer = "+4915199999999"
	require.Equal(t, keyedID(t, c), keyedID(t, number), "the keyed ID hashes the key, not the number")
	for _, other := range []intent.Canonical{
		{Tenant: "other", CustomerKey: key, Service: "tire-change", Start: c.Start},
		{Tenant: "demo", CustomerKey: mustKey("demo", "+4915199999999"), Service: "tire-change", Start: c.Start},
		{Tenant: "demo", CustomerKey: key, Service: "inspection", Start: c.Start},
		{Tenant: "demo", CustomerKey: key, Service: "tire-change", Resource: "Bühne 1", Start: c.Start},
		{Tenant: "demo", CustomerKey: key, Service: "tire-change", Start: c.Start.Add(time.Minute)},
	} {
		require.NotEqual(t, keyedID(t, c), keyedID(t, other), "%+v", other)
	}
	require.NotEqual(t, c.LegacyID(), keyedID(t, c))
}

// phrasing is a message and the service known from the conversation, for
// confirmations that do not repeat it.
type phrasing struct{ text, contextService string }

// TestSameWishSameID: differently phrased messages of one wish, in either
// language and on either channel, must merge into one canonical intent.
func TestSameWishSameID(t *testing.T) {
	groups := [][]phrasing{
		{
			{text: "Dienstag um 14 Uhr Reifenwechsel"},
			{text: "Reifenwechsel am Dienstag, 14:00"},
			{text: "tire change tuesday 2pm"},
			{text: "Nimm Dienstag um zwei", contextService: tire},
			{text: "Ja, Dienstag 14 Uhr passt", contextService: tire},
			{text: "Reifen wechseln, 1.12., 14 Uhr"},
			{text: "tyre change on December 1st at 2 pm"},
			{text: "Reifenwechsel morgen um zwei"},
			{text: "Reifenwechseltermin am 1. Dezember um 14:00 Uhr"},
			{text: "Räder wechseln Di. 14h"},
		},
		{
			{text: "Kann ich morgen früh um 9 zur Inspektion kommen?"},
			{text: "Inspektion Dienstag 9 Uhr morgens"},
			{text: "inspection tomorrow at 9am"},
			{text: "Inspektion am 1.12. um 09:00"},
		},
		{
			{text: "Ölwechsel Donnerstag halb drei"},
			{text: "Oelwechsel am 3.12. um 14:30"},
			{text: "oil change thursday half past two"},
			{text: "Ölwechsel Donnerstag um vierzehn Uhr dreißig"},
			{text: "okay, nehme ich: Donnerstag, halb drei", contextService: oil},
		},
	}
	seen := map[string]int{}
	for gi, group := range groups {
		var want string
		for _, ph := range group {
			r := extract(t, ph.text)
			svc := r.Service
			if svc == "" {
				svc = ph.contextService
			}
			require.False(t, r.Start.IsZero(), "%q: %q", ph.text, r.Question)
			id := keyedID(t, intent.Canonical{Tenant: "demo", CustomerKey: key, Service: svc, Resource: r.Resource, Start: r.Start})
			if want == "" {
				want = id
			}
			require.Equal(t, want, id, "%q", ph.text)
		}
		prev, dup := seen[want]
		require.False(t, dup, "group %d has the ID of group %d", gi, prev)
		seen[want] = gi
	}
}
