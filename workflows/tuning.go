package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Duration is a time.Duration that travels as a workflow input.
type Duration = time.Duration

// Tuning holds the saga's timeouts and retry bounds. Zero values take the
// defaults; tests shorten them. It is part of the input, so a workflow's
// behaviour is fixed at its start and replays deterministically.
type Tuning struct {
	// ActivityAttempts bounds retries of one step before it is reconciled.
	ActivityAttempts int32 `json:"activity_attempts,omitempty"`
	// MaxRetryInterval caps the backoff between attempts.
	MaxRetryInterval Duration `json:"max_retry_interval,omitempty"`
	// ReviewTimeout is how long a review case may stay undecided before
	// the saga abandons and compensates.
	ReviewTimeout Duration `json:"review_timeout,omitempty"`
	// AuthorizationTimeout is how long the saga waits for the deposit.
	AuthorizationTimeout Duration `json:"authorization_timeout,omitempty"`
	// ActivityTimeout bounds one attempt of one activity; a worker that
	// dies mid-attempt is noticed after it.
	ActivityTimeout Duration `json:"activity_timeout,omitempty"`
	// CompensationTimeout bounds how long one compensation (release, void,
	// refund, cancel booking, close intent) keeps retrying: long enough to
	// outlast any outage, so that only a final answer or a week of failures
	// hands it to a person.
	CompensationTimeout Duration `json:"compensation_timeout,omitempty"`
	// CompensationMaxInterval caps the backoff between attempts of a
	// compensation.
	CompensationMaxInterval Duration `json:"compensation_max_interval,omitempty"`
	// ReconcileTimeout bounds how long a lookup that settles an unknown
	// outcome (was the hold placed?) keeps asking a downstream that does
	// not answer: long enough to outlast a database failover, short enough
	// that a customer waiting for an answer hears from a person soon.
	ReconcileTimeout Duration `json:"reconcile_timeout,omitempty"`
	// KeyHorizon is how long a payment provider whose lookup lags keeps
	// idempotency keys (Stripe: 24 h): within it the saga retries an
	// unknown authorisation with the same key; past it a person decides.
	KeyHorizon Duration `json:"key_horizon,omitempty"`
	// ReminderLead: a booking's reminder due less than this after its
	// lifecycle started is not sent (the confirmation has just said the
	// same). Zero: 1 h. A negative lead plans reminders already overdue by
	// up to its magnitude, sent at once: the chaos drill, whose slots are
	// days ahead, exercises reminders so (REMINDER_LEAD).
	ReminderLead Duration `json:"reminder_lead,omitempty"`
}

// WithDefaults is t with every zero bound replaced by its default; each
// workflow reads its tuning through it once, at its start.
func (t Tuning) WithDefaults() Tuning {
	if t.ActivityAttempts <= 0 {
		t.ActivityAttempts = 10
	}
	if t.MaxRetryInterval <= 0 {
		t.MaxRetryInterval = 10 * time.Second
	}
	if t.ReviewTimeout <= 0 {
		t.ReviewTimeout = 24 * time.Hour
	}
	if t.AuthorizationTimeout <= 0 {
		t.AuthorizationTimeout = 10 * time.Minute
	}
	if t.ActivityTimeout <= 0 {
		t.ActivityTimeout = 15 * time.Second
	}
	if t.CompensationTimeout <= 0 {
		t.CompensationTimeout = 7 * 24 * time.Hour
	}
	if t.CompensationMaxInterval <= 0 {
		t.CompensationMaxInterval = time.Minute
	}
	if t.ReconcileTimeout <= 0 {
		t.ReconcileTimeout = 15 * time.Minute
	}
	if t.KeyHorizon <= 0 {
		t.KeyHorizon = 23 * time.Hour // inside Stripe's 24 h, with margin
	}
	if t.ReminderLead == 0 {
		t.ReminderLead = MinReminderLead
	}
	// The server refuses a retry policy whose maximum interval is below its
	// initial one: every activity schedule would fail, and the workflow
	// task with it, forever. A cap below the first backoff means "no
	// backoff growth", so it is read as the first backoff.
	t.MaxRetryInterval = max(t.MaxRetryInterval, InitialRetryInterval)
	t.CompensationMaxInterval = max(t.CompensationMaxInterval, InitialRetryInterval)
	return t
}

// MinReminderLead: a reminder is planned only if it is due at least this
// long after the booking's lifecycle started (Tuning.ReminderLead changes
// it).
const MinReminderLead = time.Hour

// InitialRetryInterval is the first backoff of every retried activity.
const InitialRetryInterval = 200 * time.Millisecond

// ActivityCtx sets the activity ID (keys derive from it), a summary for
// the Web UI, and a retry policy that retries transient and unknown
// outcomes with the same key (the downstream replays) while final answers
// stop at once (non-retryable application errors).
func ActivityCtx(ctx workflow.Context, t Tuning, id, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          id,
		Summary:             summary,
		StartToCloseTimeout: t.ActivityTimeout,
		RetryPolicy:         RetryPolicy(t),
	})
}

// RetryPolicy is how a step retries: quickly at first, at most
// MaxRetryInterval apart, ActivityAttempts times.
func RetryPolicy(t Tuning) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:    InitialRetryInterval,
		BackoffCoefficient: 2,
		MaximumInterval:    t.MaxRetryInterval,
		MaximumAttempts:    t.ActivityAttempts,
	}
}

// CompensationCtx is ActivityCtx for an undo: it retries transient and
// unknown outcomes with the same key until they succeed (no attempt limit,
// capped backoff) within CompensationTimeout, so a downstream outage of
// minutes or hours delays the undo instead of abandoning it. Only a final
// answer, or the bound, ends it with an error, which opens a review case.
func CompensationCtx(ctx workflow.Context, t Tuning, id, summary string) workflow.Context {
	return untilAnsweredCtx(ctx, t, id, summary, t.CompensationTimeout)
}

// ReconcileCtx is CompensationCtx for a lookup that settles an unknown
// outcome: the same key until the downstream answers, bounded by
// ReconcileTimeout instead of a week, because a customer waits for it.
func ReconcileCtx(ctx workflow.Context, t Tuning, id, summary string) workflow.Context {
	return untilAnsweredCtx(ctx, t, id, summary, t.ReconcileTimeout)
}

// untilAnsweredCtx retries with the same key, capped backoff and no
// attempt limit: only a final answer or the bound ends it.
func untilAnsweredCtx(ctx workflow.Context, t Tuning, id, summary string, bound time.Duration) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:             id,
		Summary:                summary,
		StartToCloseTimeout:    t.ActivityTimeout,
		ScheduleToCloseTimeout: bound,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    InitialRetryInterval,
			BackoffCoefficient: 2,
			MaximumInterval:    t.CompensationMaxInterval,
			MaximumAttempts:    0,
		},
	})
}
