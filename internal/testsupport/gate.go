package testsupport

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// GateSignal opens a ChildGate for the workflow it is sent to.
const GateSignal = "testsupport-gate"

// ChildGate holds a workflow just before it starts a child of one type,
// until the test sends it GateSignal: the test can then deliver a signal
// at exactly that point of the real workflow on the real server. The
// wait is a signal the workflow receives, so a replay passes the gate as
// the first run did. Install it with Worker's interceptors.
type ChildGate struct {
	interceptor.WorkerInterceptorBase
	childType string
	reached   chan struct{}
	once      sync.Once
}

// NewChildGate holds workflows before their start of a childType child.
func NewChildGate(childType string) *ChildGate {
	return &ChildGate{childType: childType, reached: make(chan struct{})}
}

// Reached is closed once a workflow waits at the gate.
func (g *ChildGate) Reached() <-chan struct{} { return g.reached }

// InterceptWorkflow wraps the workflow's calls out.
func (g *ChildGate) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &gateInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, gate: g}
}

type gateInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	gate *ChildGate
}

func (i *gateInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&gateOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, gate: i.gate})
}

type gateOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	gate *ChildGate
}

func (o *gateOutbound) ExecuteChildWorkflow(ctx workflow.Context, childType string, args ...any) workflow.ChildWorkflowFuture {
	if childType == o.gate.childType {
		o.gate.once.Do(func() { close(o.gate.reached) })
		workflow.GetSignalChannel(ctx, GateSignal).Receive(ctx, nil)
	}
	return o.Next.ExecuteChildWorkflow(ctx, childType, args...)
}

// SignalAtGate waits until workflowID waits at the gate, sends it signal
// (without arguments) and opens the gate: the signal is in the history
// before the child's start.
func (g *ChildGate) SignalAtGate(ctx context.Context, t testing.TB, c client.Client, workflowID, signal string) {
	t.Helper()
	select {
	case <-g.reached:
	case <-ctx.Done():
		t.Fatalf("%s never reached the start of its %s", workflowID, g.childType)
	}
	require.NoError(t, c.SignalWorkflow(ctx, workflowID, "", signal, nil))
	require.NoError(t, c.SignalWorkflow(ctx, workflowID, "", GateSignal, nil))
}
