package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
)

// TestMatrix14LaggingLookupKeepsKey: the payment provider's search lags
// (a Stripe double on loopback in front of our payment API) and the
// authorisation's answers are lost beyond the step retry budget. The
// search says "nothing", which proves nothing there: the saga keeps the
// same key until the provider answers, and never sends a second one.
func TestMatrix14LaggingLookupKeepsKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config.Config) { c.PaymentsAuthoritativeLookup = false })
	lagging := testsupport.NewLaggingSearch(t, e.payments.URL, 1, int(shortSteps.ActivityAttempts)+1)
	e.cfg.PaymentsURL = lagging.URL
	e.startWorker(t)
	req := request(t, "+4915112345614", time.Thursday, 14)
	req.Tuning = shortSteps
	_, st := run(t, e, req)

	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, booked, e.effects(t, req.Customer, req.SlotStart), "one authorisation, captured once")
	require.Positive(t, lagging.Searches(), "the saga asked the lagging search")
	keys := lagging.AuthorisationKeys()
	require.Greater(t, len(keys), int(shortSteps.ActivityAttempts), "the answers were lost beyond the step budget")
	for _, k := range keys {
		require.Equal(t, keys[0], k, "never a second key: %v", keys)
	}
}
