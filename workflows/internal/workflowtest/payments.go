package workflowtest

import (
	"context"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/payments"
)

// PaymentAPI is the payment API and review queue of a unit test: the
// deposit saga's activities answer from overridable functions (nil means
// the default: everything works) and the authorisation it holds is
// tracked, so a test can say none is left behind.
type PaymentAPI struct {
	mu sync.Mutex
	// live: an authorisation is held (authorised, neither voided nor
	// captured).
	live bool

	Authorize   func(context.Context, activities.DepositInput) (activities.IntentResult, error)
	FindDeposit func(context.Context, activities.IntentInput) (activities.IntentResult, error)
	Capture     func(context.Context, activities.IntentInput) (activities.IntentResult, error)
	Void        func(context.Context, activities.IntentInput) (activities.IntentResult, error)
	OpenReview  func(context.Context, activities.ReviewInput) (activities.Step, error)
}

// Live reports whether an authorisation is held.
func (p *PaymentAPI) Live() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// SetLive says an authorisation is (or is no longer) held, as a payment
// the test makes by other means does.
func (p *PaymentAPI) SetLive(live bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live = live
}

// Mock answers env's deposit and review activities; rec notes each, and
// delay says how late each activity type answers.
func (p *PaymentAPI) Mock(env *testsuite.TestWorkflowEnvironment, rec *Recorder, delay func(activity string) func() time.Duration) {
	a := (*activities.Activities)(nil)
	env.OnActivity(a.AuthorizeDeposit, mock.Anything, mock.Anything).AfterFn(delay("AuthorizeDeposit")).Return(
		func(ctx context.Context, in activities.DepositInput) (activities.IntentResult, error) {
			rec.Note(ctx, in)
			if p.Authorize != nil {
				return p.Authorize(ctx, in)
			}
			p.SetLive(true)
			return activities.IntentResult{Step: Step(ctx, "pi_1"), Found: true,
				Intent: payments.Intent{ID: "pi_1", Status: payments.StatusRequiresCapture, Amount: in.Amount, Currency: in.Currency, Reference: in.Reference}}, nil
		})
	env.OnActivity(a.FindDeposit, mock.Anything, mock.Anything).AfterFn(delay("FindDeposit")).Return(
		func(ctx context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			rec.Note(ctx, in)
			if p.FindDeposit != nil {
				return p.FindDeposit(ctx, in)
			}
			return activities.IntentResult{Authoritative: true}, nil // our payment API: "not found" proves absence
		})
	env.OnActivity(a.CaptureDeposit, mock.Anything, mock.Anything).AfterFn(delay("CaptureDeposit")).Return(
		func(ctx context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			rec.Note(ctx, in)
			if p.Capture != nil {
				return p.Capture(ctx, in)
			}
			p.SetLive(false)
			return activities.IntentResult{Step: Step(ctx, in.IntentID), Found: true, Intent: payments.Intent{ID: in.IntentID, Status: payments.StatusSucceeded}}, nil
		})
	env.OnActivity(a.VoidDeposit, mock.Anything, mock.Anything).AfterFn(delay("VoidDeposit")).Return(
		func(ctx context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			rec.Note(ctx, in)
			if p.Void != nil {
				if res, err := p.Void(ctx, in); err != nil {
					return res, err
				}
			}
			p.SetLive(false)
			return activities.IntentResult{Step: Step(ctx, "pi_1"), Found: true, Intent: payments.Intent{ID: "pi_1", Status: payments.StatusCanceled}}, nil
		})
	env.OnActivity(a.OpenReviewCase, mock.Anything, mock.Anything).AfterFn(delay("OpenReviewCase")).Return(
		func(ctx context.Context, in activities.ReviewInput) (activities.Step, error) {
			rec.Note(ctx, in)
			if p.OpenReview != nil {
				return p.OpenReview(ctx, in)
			}
			// The review store answers a repeated key with the case it
			// opened first: the case ID is a function of the key.
			key := activities.KeyOf(ctx)
			return activities.Step{Key: key, Attempt: 1, DownstreamID: "rc_" + key[len(key)-8:]}, nil
		})
}

// NoDelay answers every activity at once.
func NoDelay(string) func() time.Duration { return func() time.Duration { return 0 } }
