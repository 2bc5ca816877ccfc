package dedup_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/internal/testsupport"
)

func store(t *testing.T) *dedup.Store {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	return &dedup.Store{Pool: testsupport.Database(t), Window: 3 * time.Minute, Retention: 72 * time.Hour, Location: berlin}
}

var slot = time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)

func intent(id, service, channel, event string, start time.Time) dedup.Intent {
	return dedup.Intent{Tenant: "demo", IntentID: id, Customer: "+4915112345678", Service: service, SlotStart: start,
		Channel: channel, EventID: event, WorkflowID: "appointment:demo:" + id, ConversationID: "customer:demo:+4915112345678"}
}

// TestSameIntentConcurrentlyOneNewRestMerge: the same wish from several
// deliveries at once (voice and WhatsApp, retries) starts one booking.
func TestSameIntentConcurrentlyOneNewRestMerge(t *testing.T) {
	s := store(t)
	const n = 6
	decisions := make([]dedup.Decision, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch := []string{"voice", "whatsapp"}[i%2]
			d, err := s.Decide(context.Background(), fmt.Sprintf("key-%d", i), intent("i1", "tire-change", ch, fmt.Sprintf("ev-%d", i), slot))
			require.NoError(t, err)
			decisions[i] = d
		}()
	}
	wg.Wait()
	kinds := map[dedup.Kind]int{}
	for _, d := range decisions {
		kinds[d.Kind]++
		require.Equal(t, "appointment:demo:i1", d.WorkflowID)
	}
	require.Equal(t, map[dedup.Kind]int{dedup.New: 1, dedup.Merge: n - 1}, kinds)
	var events int
	require.NoError(t, s.Pool.QueryRow(context.Background(), `SELECT cardinality(events) FROM booking_intents WHERE intent_id = 'i1'`).Scan(&events))
	require.Equal(t, n, events, "every delivery is linked to the one intent")
}

func TestRetriedKeyReturnsTheDecisionTaken(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	first, err := s.Decide(ctx, "k", intent("i1", "tire-change", "voice", "e1", slot))
	require.NoError(t, err)
	// Meanwhile another delivery of the same intent arrived...
	_, err = s.Decide(ctx, "k2", intent("i1", "tire-change", "whatsapp", "e2", slot))
	require.NoError(t, err)
	// ...and the first activity is retried: it gets its own decision back.
	again, err := s.Decide(ctx, "k", intent("i1", "tire-change", "voice", "e1", slot))
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Equal(t, dedup.New, again.Kind)
}

func TestCloseButDifferentGoesToReviewNeverDropped(t *testing.T) {
	cases := []struct {
		name, service string
		start         time.Time
		want          dedup.Kind
	}{
		{"same slot, other service", "inspection", slot, dedup.Review},
		{"same service, same day", "tire-change", slot.Add(3 * time.Hour), dedup.Review},
		{"other service, other day", "inspection", slot.Add(48 * time.Hour), dedup.New},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := store(t)
			ctx := context.Background()
			_, err := s.Decide(ctx, "k1", intent("first", "tire-change", "voice", "e1", slot))
			require.NoError(t, err)
			d, err := s.Decide(ctx, "k2", intent("second", tc.service, "whatsapp", "e2", tc.start))
			require.NoError(t, err)
			require.Equal(t, tc.want, d.Kind)
			if tc.want != dedup.Review {
				return
			}
			require.Equal(t, "first", d.Conflicting)
			var reason, wf string
			require.NoError(t, s.Pool.QueryRow(ctx, `SELECT reason, workflow_id FROM review_cases WHERE id = $1`, d.ReviewCase).Scan(&reason, &wf))
			require.Equal(t, "potential_duplicate", reason)
			require.Equal(t, "customer:demo:+4915112345678", wf, "the case resolves back to the conversation")
			// A reviewer decides "separate": the second wish becomes a booking.
			sep := intent("second", tc.service, "whatsapp", "e2", tc.start)
			sep.Separate = true
			d2, err := s.Decide(ctx, "k3", sep)
			require.NoError(t, err)
			require.Equal(t, dedup.New, d2.Kind)
		})
	}
}

func TestOutsideTheWindowIsNew(t *testing.T) {
	s := store(t)
	now := time.Now()
	s.Now = func() time.Time { return now }
	ctx := context.Background()
	_, err := s.Decide(ctx, "k1", intent("first", "tire-change", "voice", "e1", slot))
	require.NoError(t, err)
	now = now.Add(4 * time.Minute)
	d, err := s.Decide(ctx, "k2", intent("second", "inspection", "whatsapp", "e2", slot))
	require.NoError(t, err)
	require.Equal(t, dedup.New, d.Kind, "a second car later on is a genuine second booking")
}

// TestAfterAFailedAppointmentTheSameWishIsANewAttempt: a wish whose
// appointment ended without a booking (declined card, say) is not merged
// into it when it comes again; it starts afresh under a new workflow ID.
func TestAfterAFailedAppointmentTheSameWishIsANewAttempt(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	first, err := s.Decide(ctx, "k1", intent("i1", "tire-change", "whatsapp", "e1", slot))
	require.NoError(t, err)
	require.Equal(t, dedup.New, first.Kind)
	require.NoError(t, s.Close(ctx, "demo", "i1", first.WorkflowID))
	require.NoError(t, s.Close(ctx, "demo", "i1", first.WorkflowID), "closing twice changes nothing")

	again, err := s.Decide(ctx, "k2", intent("i1", "tire-change", "whatsapp", "e2", slot))
	require.NoError(t, err)
	require.Equal(t, dedup.New, again.Kind)
	require.NotEqual(t, first.WorkflowID, again.WorkflowID, "the failed appointment has completed: a new ID")
	// And while the new attempt runs, repeats merge into it.
	repeat, err := s.Decide(ctx, "k3", intent("i1", "tire-change", "voice", "e3", slot))
	require.NoError(t, err)
	require.Equal(t, dedup.Merge, repeat.Kind)
	require.Equal(t, again.WorkflowID, repeat.WorkflowID)
}
