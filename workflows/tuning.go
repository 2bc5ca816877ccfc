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
}

func (t Tuning) withDefaults() Tuning {
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
	return t
}

// activityCtx sets the activity ID (keys derive from it), a summary for
// the Web UI, and a retry policy that retries transient and unknown
// outcomes with the same key (the downstream replays) while final answers
// stop at once (non-retryable application errors).
func activityCtx(ctx workflow.Context, t Tuning, id, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          id,
		Summary:             summary,
		StartToCloseTimeout: t.ActivityTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    200 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    t.MaxRetryInterval,
			MaximumAttempts:    t.ActivityAttempts,
		},
	})
}
