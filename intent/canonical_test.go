package intent_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
)

const customer = "+4915112345678"

// TestCanonicalIDMatchesWorkflows pins Canonical.ID to values computed once
// with workflows.IntentID: both must name the same workflow, and the
// package cannot import workflows.
func TestCanonicalIDMatchesWorkflows(t *testing.T) {
	require.Equal(t, "bf4ad95ffbb7651540a42ae1",
		intent.Canonical{Tenant: "demo", Customer: customer, Service: "tire-change", Start: at(2026, 12, 1, 14, 0)}.ID())
	require.Equal(t, "3b66b46a05230e25dd592631",
		intent.Canonical{Tenant: "demo", Customer: customer, Service: "tire-change", Resource: "Bühne 1",
			Start: time.Date(2026, 12, 1, 14, 0, 42, 7, berlin)}.ID())
	require.Equal(t, "414178536d98d749dc1d9e2b", intent.Canonical{}.ID())
}

func TestCanonicalIDIgnoresZoneAndSeconds(t *testing.T) {
	c := intent.Canonical{Tenant: "demo", Customer: customer, Service: "tire-change", Start: at(2026, 12, 1, 14, 0)}
	utc := c
	utc.Start = time.Date(2026, 12, 1, 13, 0, 59, 999, time.UTC)
	require.Equal(t, c.ID(), utc.ID())
	require.Len(t, c.ID(), 24)
	for _, other := range []intent.Canonical{
		{Tenant: "other", Customer: customer, Service: "tire-change", Start: c.Start},
		{Tenant: "demo", Customer: "+4915199999999", Service: "tire-change", Start: c.Start},
		{Tenant: "demo", Customer: customer, Service: "inspection", Start: c.Start},
		{Tenant: "demo", Customer: customer, Service: "tire-change", Resource: "Bühne 1", Start: c.Start},
		{Tenant: "demo", Customer: customer, Service: "tire-change", Start: c.Start.Add(time.Minute)},
	} {
		require.NotEqual(t, c.ID(), other.ID(), "%+v", other)
	}
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
			id := intent.Canonical{Tenant: "demo", Customer: customer, Service: svc, Resource: r.Resource, Start: r.Start}.ID()
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
