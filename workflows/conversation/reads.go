package conversation

import (
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/workflows"
)

// read runs one of the conversation's steps that derive no idempotency key
// and leave nothing behind that a repeat would double: understanding a
// message (ExtractIntent) and checking it (ValidateIntent) read the
// tenant's configuration, and asking a legacy conversation to hand over
// (AskHandOver) is a signal its receiver merges once. Since
// versionLocalReads they are local activities: they run inside the
// workflow task that needs them, so a message costs three fewer activity
// tasks and workflow tasks on the server (about a fifth of a booking's
// server work, docs/benchmarks.md), and a caller waits less. Runs from
// before replay their recorded activities. Steps with an idempotency key
// stay activities: a local activity's ID is a counter, not the stable ID
// the key is derived from.
func (c *conversation) read(ctx workflow.Context, id, summary string, step any, args ...any) workflow.Future {
	if c.versions.GetVersion(ctx, versionLocalReads, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return workflow.ExecuteActivity(c.opts(ctx, id, summary), step, args...)
	}
	t := workflows.Tuning{}.WithDefaults()
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		Summary:             summary,
		StartToCloseTimeout: t.ActivityTimeout,
		// A backoff longer than the workflow task allows becomes a timer,
		// so a retry never holds the task.
		RetryPolicy: workflows.RetryPolicy(t),
	})
	return workflow.ExecuteLocalActivity(lctx, step, args...)
}
