package outbox_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/outbox"
)

func TestStatusCallbackNamesTheMessageUnderTheGivenRoute(t *testing.T) {
	cb := outbox.StatusCallback("https://bookonce.example/", "/hooks/status")
	require.Equal(t, "https://bookonce.example/hooks/status?outbox_id=msg_a%26b", cb("msg_a&b"))
}

// TestRecordStatusOnlyMovesForward: delivery statuses, in any order and
// repeated, move a message up its states and never back; the message is
// found by its ID or by the provider's.
func TestRecordStatusOnlyMovesForward(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	for i, tc := range []struct {
		name     string
		from     string // state of the message before the statuses
		byID     bool   // the callback names the outbox ID (else only the provider's)
		statuses []string
		want     string
	}{
		{"sent then delivered", "pending", true, []string{"sent", "delivered"}, "delivered"},
		{"late sent after delivered", "sent", true, []string{"delivered", "sent"}, "delivered"},
		{"read counts as delivered", "sent", false, []string{"read"}, "delivered"},
		{"undelivered is failed, and final", "sent", true, []string{"undelivered", "delivered", "sent"}, "failed"},
		{"review: sent says nothing new", "review", true, []string{"sent"}, "review"},
		{"review settled by delivered", "review", true, []string{"sent", "delivered"}, "delivered"},
		{"statuses the outbox does not record", "pending", true, []string{"queued", "accepted", "sending"}, "pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, sid := fmt.Sprintf("ref-%d", i), fmt.Sprintf("SM%d", i)
			m := e.reserve(ref, "whatsapp", "+4915112345678", "hi "+ref)
			_, err := e.store.Pool.Exec(ctx, `UPDATE outbox_messages SET state = $2, provider_id = $3 WHERE id = $1`, m.ID, tc.from, sid)
			require.NoError(t, err)
			id := ""
			if tc.byID {
				id = m.ID
			}
			for _, st := range tc.statuses {
				require.NoError(t, e.store.RecordStatus(ctx, id, sid, st, outbox.Failure{}))
			}
			require.Equal(t, tc.want, e.row(m.ID).State)
			require.Equal(t, sid, e.row(m.ID).ProviderID)
		})
	}
}

// TestRecordStatusKeepsTheFirstProviderID: a callback naming the message
// records the provider's ID when the relay has not yet done so.
func TestRecordStatusKeepsTheFirstProviderID(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	m := e.reserve("ref-first", "sms", "+4915112345678", "hi")
	require.NoError(t, e.store.RecordStatus(ctx, m.ID, "SMfirst", "sent", outbox.Failure{}))
	require.NoError(t, e.store.RecordStatus(ctx, m.ID, "SMsecond", "delivered", outbox.Failure{}))
	require.Equal(t, row{State: "delivered", ProviderID: "SMfirst"}, e.row(m.ID))
}
