package outbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/outbox"
)

// TestDuplicatesBlockedAtTheOutbox: a second reservation of the same
// message and a lost send answer found by reconciliation each count one
// duplicate blocked at the outbox layer; a conflicting text does not (it is
// refused, not a duplicate), and exactly one message reaches Twilio.
func TestDuplicatesBlockedAtTheOutbox(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	ctx := context.Background()
	const tenant = "tenant-outbox-metrics" // the counter is process-wide; other tests use tenant-1
	blocked := func(route string) float64 {
		return testutil.ToFloat64(telemetry.DuplicatesBlocked.WithLabelValues(telemetry.LayerOutbox, tenant, route))
	}
	msg := outbox.Message{Tenant: tenant, Reference: "bk_m", Kind: "confirmation", Channel: "whatsapp", Recipient: customer,
		Body: "Ihr Termin am Dienstag um 14 Uhr ist bestätigt."}

	first, err := e.store.Reserve(ctx, "key-m", msg)
	require.NoError(t, err)
	require.Zero(t, blocked(outbox.RouteReserve), "a first reservation is no duplicate")
	again, err := e.store.Reserve(ctx, "key-m", msg) // a retried activity
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
	require.Equal(t, 1.0, blocked(outbox.RouteReserve))
	other := msg
	other.Body = "Ein anderer Text"
	_, err = e.store.Reserve(ctx, "key-m", other)
	require.True(t, errors.Is(err, outbox.ErrConflict))
	require.Equal(t, 1.0, blocked(outbox.RouteReserve), "a conflict is refused, not counted as a duplicate")

	e.fake.DropNextResponse() // Twilio takes the message, the answer is lost
	require.Equal(t, 0, e.runOnce(s))
	require.Zero(t, blocked(outbox.RouteReconcile))
	e.advance(sendTimeout + time.Second)
	require.Equal(t, 1, e.runOnce(s), "reconciled as sent")
	require.Len(t, e.fake.Messages(), 1, "found, not sent again")
	require.Equal(t, "sent", e.row(first.ID).State)
	require.Equal(t, 1.0, blocked(outbox.RouteReconcile))
}

// TestReserveAfterRedactionMeetsTheSameRow: a row the retention sweep
// redacted (text and recipient blanked) is still the message reserved
// for that booking and kind: reserving it again (a reset workflow) finds
// it instead of failing with ErrConflict, and sends nothing new.
func TestReserveAfterRedactionMeetsTheSameRow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	msg := outbox.Message{Tenant: "tenant-outbox-redacted", Reference: "bk_r", Kind: "confirmation", Channel: "whatsapp", Recipient: customer,
		Body: "Ihr Termin am Dienstag um 14 Uhr ist bestätigt."}
	first, err := e.store.Reserve(ctx, "key-r", msg)
	require.NoError(t, err)
	_, err = e.store.Pool.Exec(ctx, `UPDATE outbox_messages SET body = '', recipient = '', redacted_at = now() WHERE id = $1`, first.ID)
	require.NoError(t, err)
	again, err := e.store.Reserve(ctx, "key-r", msg)
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
}

// TestMessageSentPhaseCountsFromTheAcceptedTime: a confirmation reserved
// with its booking's accepted time records message_sent, the time from
// then to the send, once; a message without one records nothing.
func TestMessageSentPhaseCountsFromTheAcceptedTime(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	ctx := context.Background()
	const tenant = "tenant-outbox-phase" // the histogram is process-wide
	sent := func() (uint64, float64) {
		h := &dto.Metric{}
		require.NoError(t, telemetry.BookingPhases.WithLabelValues(string(telemetry.PhaseMessageSent), tenant).(prometheus.Histogram).Write(h))
		return h.GetHistogram().GetSampleCount(), h.GetHistogram().GetSampleSum()
	}
	accepted := e.now().Add(-1500 * time.Millisecond)
	for _, m := range []outbox.Message{
		{Tenant: tenant, Reference: "bk_p1", Kind: "confirmation", Channel: "whatsapp", Recipient: customer, Body: "Bestätigt.", AcceptedAt: accepted},
		{Tenant: tenant, Reference: "bk_p2", Kind: "reply", Channel: "whatsapp", Recipient: customer, Body: "Verstanden."},
	} {
		_, err := e.store.Reserve(ctx, "key-"+m.Reference, m)
		require.NoError(t, err)
	}
	require.Equal(t, 2, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 2)
	n, sum := sent()
	require.Equal(t, uint64(1), n, "only the message with an accepted time")
	require.InDelta(t, 1.5, sum, 0.001, "seconds from the accepted time to the send (the relay's clock)")
	require.Equal(t, 0, e.runOnce(s))
	n, _ = sent()
	require.Equal(t, uint64(1), n, "a sent message is not observed again")
}
