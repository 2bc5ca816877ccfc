package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/outbox"
)

// TestMessagePastItsMomentIsRecordedNotSent: a reminder reserved before
// its slot but reached by the relay only after the slot began (the
// database was down in between) is never sent late: the row is 'expired'
// with the reason, nothing reaches the fake Twilio. One still in time, and
// one without a moment, go out.
func TestMessagePastItsMomentIsRecordedNotSent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	slot := e.now().Add(time.Hour)
	reserve := func(ref string, sendBy time.Time) outbox.Message {
		m, err := e.store.Reserve(context.Background(), "key-"+ref, outbox.Message{
			Tenant: "tenant-1", Reference: ref, Kind: "reminder", Channel: "whatsapp", Recipient: customer,
			Body: "Erinnerung an " + ref, SendBy: sendBy,
		})
		require.NoError(t, err)
		return m
	}
	late := reserve("bk_late", slot)
	inTime := reserve("bk_in_time", slot.Add(2*time.Hour))
	always := reserve("bk_always", time.Time{})

	e.advance(90 * time.Minute) // the relay comes back after the first slot began
	require.Equal(t, 2, e.runOnce(s))

	cases := []struct {
		name  string
		id    string
		state string
		error string
	}{
		{"past its moment", late.ID, "expired", "not sent: its moment passed at " + slot.UTC().Format(time.RFC3339)},
		{"still in time", inTime.ID, "sent", ""},
		{"without a moment", always.ID, "sent", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := e.row(tc.id)
			require.Equal(t, tc.state, got.State)
			require.Contains(t, got.LastError, tc.error)
		})
	}
	var bodies []string
	for _, m := range e.fake.Messages() {
		bodies = append(bodies, m.Body)
	}
	require.ElementsMatch(t, []string{"Erinnerung an bk_in_time", "Erinnerung an bk_always"}, bodies)
	require.Zero(t, e.runOnce(s), "an expired row is never picked up again")
}
