package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/bookonce/bookonce/internal/testsupport"
)

// localReads are the conversation's steps that run as local activities
// since conversation-local-reads.
var localReads = []string{"AskHandOver", "ExtractIntent", "ValidateIntent"}

// TestRecordHistoriesLocalReads records a keyed conversation that books
// in one message after conversation-local-reads: asking for a hand-over,
// understanding and checking the wish are markers of local activities in
// its history, the dedup decision and the reply stay activities. Runs with
// `make histories`.
func TestRecordHistoriesLocalReads(t *testing.T) {
	s, ctx := recording(t)
	in, id, _ := keyedWish(t, ctx, s, "+4915112340040", "REClocal1", time.Wednesday, 15)
	testsupport.Eventually(t, 60*time.Second, "the conversation's reply and appointment", func() bool {
		return len(s.appointmentsOf(ctx, string(in.CustomerKey))) == 1 &&
			s.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:REClocal1'`) == 1
	})
	h := fetchHistory(t, ctx, s.tc, id, "")
	var markers int
	for _, e := range h.GetEvents() {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			require.NotContains(t, localReads, e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName())
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				markers++
			}
		}
	}
	require.Equal(t, len(localReads), markers, "one local activity marker per read")
	writeHistory(t, h, "local-reads.conversation.json")
}
