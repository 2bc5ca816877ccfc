package consent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/testsupport"
)

func TestMatchReadsOnlyAWholeKeyword(t *testing.T) {
	cases := []struct {
		text        string
		stop, start []string
		want        consent.Action
	}{
		{text: "STOP", want: consent.OptOut},
		{text: " stopp! ", want: consent.OptOut},
		{text: "Abmelden.", want: consent.OptOut},
		{text: "unsubscribe", want: consent.OptOut},
		{text: "Start", want: consent.OptIn},
		{text: "anmelden", want: consent.OptIn},
		{text: "Stopp, ich meine Donnerstag"},
		{text: "Bitte stornieren"},
		{text: "cancel"},
		{text: ""},
		{text: "HALT", stop: []string{"HALT"}, want: consent.OptOut},
		{text: "STOP", stop: []string{"HALT"}},
		{text: "WEITER", start: []string{"WEITER"}, want: consent.OptIn},
	}
	for _, tc := range cases {
		got, ok := consent.Match(tc.text, tc.stop, tc.start)
		require.Equal(t, tc.want, got, "%q", tc.text)
		require.Equal(t, tc.want != "", ok, "%q", tc.text)
	}
}

// TestRecordChangesOnlyOnAChangeAndKeepsTheTrail: the first STOP changes
// the state, a second one (another message) and the same one again (a
// redelivery) do not; START does. The trail has one row per message,
// keyed per tenant: the same number at another shop is subscribed.
func TestRecordChangesOnlyOnAChangeAndKeepsTheTrail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &consent.Store{Pool: testsupport.Database(t), Keys: customerid.Dev()}
	const number = "+4915112345678"
	at := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	change := func(event string, action consent.Action) consent.Change {
		return consent.Change{Tenant: "demo", Customer: "whatsapp:" + number, Action: action, Channel: "whatsapp", EventID: event, At: at}
	}
	steps := []struct {
		change       consent.Change
		changed, out bool
	}{
		{change("SM1", consent.OptOut), true, true},
		{change("SM1", consent.OptOut), true, true}, // redelivered: what it reported the first time
		{change("SM2", consent.OptOut), false, true},
		{change("SM3", consent.OptIn), true, false},
		{change("SM4", consent.OptIn), false, false},
	}
	for i, st := range steps {
		changed, err := s.Record(ctx, st.change)
		require.NoError(t, err, i)
		require.Equal(t, st.changed, changed, "step %d", i)
		out, err := s.OptedOut(ctx, "demo", number)
		require.NoError(t, err)
		require.Equal(t, st.out, out, "step %d", i)
	}
	trail, err := s.Trail(ctx, "demo", number)
	require.NoError(t, err)
	require.Len(t, trail, 4)
	out, err := s.OptedOut(ctx, "other-shop", number)
	require.NoError(t, err)
	require.False(t, out)

	_, err = s.Record(ctx, consent.Change{Tenant: "demo", Customer: "0151 123", Action: consent.OptOut, EventID: "SM5", At: at})
	require.ErrorIs(t, err, consent.ErrInvalid)
}
