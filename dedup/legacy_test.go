package dedup_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/dedup"
)

// intentRow is what booking_intents holds of one intent.
type intentRow struct {
	IntentID, WorkflowID string
	Events               []string
	Closed               bool
}

// intentRows reads the customer's booking_intents rows, oldest first.
func intentRows(t *testing.T, s *dedup.Store) []intentRow {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT intent_id, workflow_id, events, closed_at IS NOT NULL FROM booking_intents ORDER BY created_at, intent_id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []intentRow
	for rows.Next() {
		var r intentRow
		require.NoError(t, rows.Scan(&r.IntentID, &r.WorkflowID, &r.Events, &r.Closed))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestBookingUnderTheLegacyIDTakesTheSameWish: a booking started before
// keyed intent IDs has a row under the plain hash's ID. The same wish,
// now under its keyed ID, merges into that booking (no second booking, no
// review case against itself) while it lives, with or without Target and
// for an agent that asks; once it is over the wish books anew under the
// keyed ID.
func TestBookingUnderTheLegacyIDTakesTheSameWish(t *testing.T) {
	const legacyWF, keyedWF = "appointment:demo:legacy1", "appointment:demo:keyed1"
	live := func(context.Context, string) (dedup.Target, error) { return dedup.Target{}, nil }
	over := func(context.Context, string) (dedup.Target, error) { return dedup.Target{Over: true}, nil }
	cases := []struct {
		name   string
		target func(context.Context, string) (dedup.Target, error)
		ask    bool
		want   dedup.Decision
		rows   []intentRow
	}{
		{"without Target", nil, false,
			dedup.Decision{Kind: dedup.Merge, IntentID: "legacy1", WorkflowID: legacyWF, ChannelPair: "voice+whatsapp"},
			[]intentRow{{IntentID: "legacy1", WorkflowID: legacyWF, Events: []string{"e-old", "e-new"}}}},
		{"a live booking", live, false,
			dedup.Decision{Kind: dedup.Merge, IntentID: "legacy1", WorkflowID: legacyWF, ChannelPair: "voice+whatsapp"},
			[]intentRow{{IntentID: "legacy1", WorkflowID: legacyWF, Events: []string{"e-old", "e-new"}}}},
		{"an agent that asks", live, true,
			dedup.Decision{Kind: dedup.Merge, IntentID: "legacy1", WorkflowID: legacyWF, ChannelPair: "voice+whatsapp"},
			[]intentRow{{IntentID: "legacy1", WorkflowID: legacyWF, Events: []string{"e-old", "e-new"}}}},
		{"a booking that is over", over, false,
			dedup.Decision{Kind: dedup.New, IntentID: "keyed1", WorkflowID: keyedWF, ChannelPair: "whatsapp"},
			[]intentRow{
				{IntentID: "legacy1", WorkflowID: legacyWF, Events: []string{"e-old"}, Closed: true},
				{IntentID: "keyed1", WorkflowID: keyedWF, Events: []string{"e-new"}},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := store(t)
			ctx := context.Background()
			// Before the upgrade: the wish was decided under its plain ID.
			_, err := s.Decide(ctx, "k-old", intent("legacy1", "tire-change", "voice", "e-old", slot))
			require.NoError(t, err)
			s.Target = tc.target
			in := intent("keyed1", "tire-change", "whatsapp", "e-new", slot)
			in.LegacyIntentID, in.Ask = "legacy1", tc.ask
			d, err := s.Decide(ctx, "k-new", in)
			require.NoError(t, err)
			require.Equal(t, tc.want, d)
			require.Equal(t, tc.rows, intentRows(t, s))
			var cases int
			require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM review_cases`).Scan(&cases))
			require.Zero(t, cases, "the same wish is no potential duplicate of itself")
		})
	}
}
