package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// TestConfirmationOutlastsOutboxOutage: the outbox refuses the booking's
// confirmation for three step retry budgets (the ordinary policy gave up
// after one, and the customer was booked and charged and never told). The
// reservation retries with its key until the outbox takes it: the
// confirmation reaches the customer once, at the fake Twilio.
func TestConfirmationOutlastsOutboxOutage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	e.fake = stacktest.TwilioRelay(t, e.cfg, e.pool, stack.Logger(e.cfg, testsupport.LogWriter(t)), 100*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The outbox refuses confirmations, as a database failing over does.
	refusal := testsupport.Refuse(t, e.pool, "refuse_reserve", "BEFORE INSERT", "outbox_messages", "NEW.kind = 'confirmation'")
	refused := refusal.Attempts

	req := request(t, "+4915112345631", time.Thursday, 10)
	req.Tuning = shortSteps
	r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	budget := 3 * int(shortSteps.ActivityAttempts)
	endWhen(t, r, "the confirmation refused for three step budgets", func() bool { return refused() >= budget })
	refusal.Lift()

	st := result(t, r)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.GreaterOrEqual(t, refused(), budget, "the outbox refused longer than the step budget")
	require.Len(t, testsupport.Delivered(t, e.pool, e.fake, r.GetID(), req.Customer, "ist bestätigt"), 1,
		"the confirmation reached the customer once")
	require.Equal(t, booked, e.effects(t, req.Customer, req.SlotStart))
}
