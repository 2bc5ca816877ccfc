package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// TestRecordHistoriesKeyedIntent records a keyed conversation that books
// in one message after keyed-intent-id: the history holds the marker of
// the conversation's baseline, which covers that change, and the
// appointment runs under the keyed intent ID.
// Runs with `make histories`.
func TestRecordHistoriesKeyedIntent(t *testing.T) {
	s, ctx := recording(t)
	in, id, slot := keyedWish(t, ctx, s, "+4915112340041", "RECkeyed1", time.Wednesday, 16)
	want := testsupport.AppointmentID(t, "demo", in.Customer, "tire-change", slot)
	testsupport.Eventually(t, 60*time.Second, "the appointment under the keyed intent ID and the reply", func() bool {
		ids := s.appointmentsOf(ctx, string(in.CustomerKey))
		return len(ids) == 1 && ids[0] == want &&
			s.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:RECkeyed1'`) == 1
	})
	h := fetchHistory(t, ctx, s.tc, id, "")
	require.EqualValues(t, 1, conversation.Baseline.Sets[1]["keyed-intent-id"], "the baseline covers keyed-intent-id")
	require.Contains(t, versionMarkers(t, h), conversation.Baseline.ID)
	writeHistory(t, h, "keyed-intent.conversation.json")
}

// versionMarkers are the change IDs of h's workflow.GetVersion markers.
func versionMarkers(t *testing.T, h *historypb.History) []string {
	t.Helper()
	var ids []string
	for _, e := range h.GetEvents() {
		m := e.GetMarkerRecordedEventAttributes()
		if e.GetEventType() != enumspb.EVENT_TYPE_MARKER_RECORDED || m.GetMarkerName() != "Version" {
			continue
		}
		var id string
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["change-id"], &id))
		ids = append(ids, id)
	}
	return ids
}
