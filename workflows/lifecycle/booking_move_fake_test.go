package lifecycle_test

// What the move tests add to the lifecycle's unit-test world: a fake
// calendar that holds and confirms the new slot, and reschedules sent at
// a moment.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

type calendarFake struct {
	taken    time.Time
	confirmE error
	// confirmDelay is how long (workflow time) a confirmation takes.
	confirmDelay time.Duration
	// holdsRefused is how many hold requests the calendar answers with a
	// retryable 503 first (an outage of its database).
	holdsRefused int
	holds        map[string]activities.HoldSlotInput
}

func newMoveEnv(t *testing.T, f *bookingFake, c *calendarFake) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newBookingEnv(t, f)
	c.holds = map[string]activities.HoldSlotInput{}
	a := &activities.Activities{}
	env.OnActivity(a.HoldSlot, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.HoldSlotInput) (activities.HoldSlotResult, error) {
			if c.holdsRefused > 0 {
				c.holdsRefused--
				return activities.HoldSlotResult{}, errors.New("hold slot: calendar create hold: 503 internal: idempotency store unavailable; retry with the same key")
			}
			f.log(fmt.Sprintf("hold %s %s second=%t", in.Reference, in.Start.Format(time.RFC3339), in.DeliberateSecond))
			if c.taken.Equal(in.Start) {
				return activities.HoldSlotResult{}, temporal.NewNonRetryableApplicationError("taken", activities.ErrTypeSlotUnavailable, nil,
					[]calendar.Slot{{ResourceID: "bay-2", Start: in.Start.Add(time.Hour), End: in.Start.Add(2 * time.Hour)}})
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			id := fmt.Sprintf("hold_%d", len(c.holds)+1)
			c.holds[id] = in
			return activities.HoldSlotResult{Step: activities.Step{Key: "k-hold", DownstreamID: id}, Hold: calendar.Hold{ID: id, Start: in.Start}}, nil
		})
	env.OnActivity(a.ConfirmHold, mock.Anything, mock.Anything).After(c.confirmDelay).Return(
		func(_ context.Context, in activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
			f.log("confirm " + in.HoldID)
			if c.confirmE != nil {
				return activities.ConfirmHoldResult{}, c.confirmE
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			h := c.holds[in.HoldID]
			b := calendar.Booking{ID: "bk_" + in.HoldID, ResourceID: "bay-1", Reference: h.Reference, Start: h.Start, End: h.Start.Add(time.Hour)}
			return activities.ConfirmHoldResult{Step: activities.Step{Key: "k-confirm", DownstreamID: b.ID}, Booking: b}, nil
		})
	env.OnActivity(a.ReleaseHold, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ReleaseHoldInput) (activities.Step, error) {
			f.log("release " + in.Reference)
			return activities.Step{Key: "k-release"}, nil
		})
	return env
}

func rescheduleAt(env *testsuite.TestWorkflowEnvironment, offset time.Duration, id string, req lifecycle.RescheduleRequest, into *answer) {
	updateAt(env, lifecycle.UpdateReschedule, offset, id, req, into)
}

func (f *bookingFake) kinds() []string {
	var out []string
	for _, m := range f.messages {
		out = append(out, m.Kind)
	}
	return out
}
