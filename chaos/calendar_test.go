package chaos_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/outcome"
)

// TestLostHoldAnswerWithTheRealCalendar drops the answer of a committed
// hold in front of the real calendar API: the caller must see Unknown, and
// a retry with the same idempotency key must succeed without a second
// reservation.
func TestLostHoldAnswerWithTheRealCalendar(t *testing.T) {
	pool := testsupport.Database(t)
	api := stacktest.CalendarAPI(t, testsupport.Config(t), pool)
	p, err := chaos.New(api.URL, []chaos.Rule{
		{Method: "POST", PathPrefix: "/v1/holds", Fault: chaos.DropAfterCommit, Probability: 1, Limit: 1},
	})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)

	c := calendar.NewClient(srv.URL, "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI")
	req := calendar.HoldRequest{
		ResourceID: "bay-1",
		Service:    "tire-change",
		Start:      testsupport.SpokenWeekday(t, time.Tuesday, 14),
		Customer:   "cust-chaos",
		Reference:  "wf-chaos-1",
	}
	const key = "chaos-hold-1"

	_, err = c.CreateHold(t.Context(), key, req)
	require.Error(t, err)
	require.Equal(t, outcome.Unknown, outcome.Of(err), "a lost answer is an unknown outcome: %v", err)
	require.Equal(t, 1, p.Stats()[chaos.DropAfterCommit])
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT count(*) FROM calendar_reservations").Scan(&n))
	require.Equal(t, 1, n, "the upstream committed before the answer was dropped")

	hold, err := c.CreateHold(t.Context(), key, req)
	require.NoError(t, err)
	require.Equal(t, "bay-1", hold.ResourceID)
	require.True(t, hold.Start.Equal(req.Start))

	require.NoError(t, pool.QueryRow(t.Context(),
		"SELECT count(*) FROM calendar_reservations WHERE reference = $1", req.Reference).Scan(&n))
	require.Equal(t, 1, n, "the retry must not reserve twice")
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT count(*) FROM calendar_reservations").Scan(&n))
	require.Equal(t, 1, n)
}
