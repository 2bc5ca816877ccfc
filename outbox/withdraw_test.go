package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/outbox"
)

// TestWithdrawTakesBackOnlyWhatNoRelayTouched: a message nobody has tried
// to send is withdrawn (again: still withdrawn), and the relay never sends
// it; one a relay has claimed or attempted is on its way and stays.
func TestWithdrawTakesBackOnlyWhatNoRelayTouched(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	s := &outbox.Store{Pool: pool}
	reserve := func(ref string) {
		_, err := s.Reserve(ctx, "k-"+ref, outbox.Message{Tenant: "demo", Reference: ref, Kind: "confirmation", Channel: "whatsapp",
			Recipient: "whatsapp:+4915112345678", Body: "Ihr Termin ist bestätigt."})
		require.NoError(t, err)
	}
	withdraw := func(ref string) bool {
		ok, err := s.Withdraw(ctx, "demo", ref, "confirmation")
		require.NoError(t, err)
		return ok
	}
	state := func(ref string) string {
		var st string
		require.NoError(t, pool.QueryRow(ctx, `SELECT state FROM outbox_messages WHERE reference = $1`, ref).Scan(&st))
		return st
	}

	reserve("waiting")
	require.True(t, withdraw("waiting"))
	require.True(t, withdraw("waiting"), "a retried call meets its own withdrawal")
	require.Equal(t, outbox.StateWithdrawn, state("waiting"))

	reserve("claimed")
	_, err := pool.Exec(ctx, `UPDATE outbox_messages SET claimed_until = $2 WHERE reference = $1`, "claimed", time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.False(t, withdraw("claimed"), "a relay holds it")
	reserve("attempted")
	_, err = pool.Exec(ctx, `UPDATE outbox_messages SET attempted_at = now() WHERE reference = $1`, "attempted")
	require.NoError(t, err)
	require.False(t, withdraw("attempted"), "it may be at Twilio")
	require.Equal(t, "pending", state("claimed"))
	require.Equal(t, "pending", state("attempted"))
	require.False(t, withdraw("never-reserved"))
}
