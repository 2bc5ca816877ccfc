// Package deploychange is a workflow change to rehearse a deploy with:
// the worker build that carries it runs the booking lifecycle with one
// more step, a version marker recorded through GetVersion (as every
// change to running workflows is guarded) before it handles a cancel or
// a move. The drill (-deploy) and the soak deploy it as the new build
// while bookings wait: a lifecycle that moved to the new build and was
// changed there shows the marker (and the change in `starter versions`),
// and one that a worker without the change had to replay after it would
// fail its task with a non-determinism error.
package deploychange

import (
	"fmt"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// ChangeID is the change's ID in its version markers and in the
// TemporalChangeVersion search attribute ("deploy-rehearsal-1").
const ChangeID = "deploy-rehearsal"

// Version is the version the change records.
const Version workflow.Version = 1

// Marker is the change as the TemporalChangeVersion search attribute of
// a workflow that recorded it lists it (and `starter versions` counts it).
func Marker() string { return fmt.Sprintf("%s-%d", ChangeID, Version) }

// Interceptor is the change, for the new build's worker options.
func Interceptor() interceptor.WorkerInterceptor { return &change{} }

type change struct {
	interceptor.WorkerInterceptorBase
}

// InterceptWorkflow changes the booking lifecycle and nothing else: it
// auto-upgrades to the new build at its next task, while the sagas,
// pinned, end on the build that started them.
func (*change) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	if workflow.GetInfo(ctx).WorkflowType.Name != lifecycle.WorkflowName {
		return next
	}
	return &inbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

type inbound struct {
	interceptor.WorkflowInboundInterceptorBase
}

// ExecuteUpdate records the change before the lifecycle handles an
// Update (a cancel, a move). The first GetVersion of a change ID fixes
// its version for the whole run, and one replayed without a marker
// fixes DefaultVersion: so the call sits where a lifecycle that waited
// on the old build first arrives on the new one, at a change it has not
// had before, rather than at its start or its activities, which it
// replays.
func (i *inbound) ExecuteUpdate(ctx workflow.Context, in *interceptor.UpdateInput) (any, error) {
	workflow.GetVersion(ctx, ChangeID, workflow.DefaultVersion, Version)
	return i.Next.ExecuteUpdate(ctx, in)
}
