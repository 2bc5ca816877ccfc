package tracing

import (
	"fmt"

	"go.opentelemetry.io/otel"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// temporalTracer names the instrumentation scope of the Temporal spans.
const temporalTracer = "temporal-sdk-go"

// spanKey is the workflow context key under which the SDK's tracing
// interceptor keeps a workflow's current span; ours, so that signalParent
// can read and replace it.
type spanKey struct{}

// TemporalInterceptors are the client interceptors that carry a trace
// through Temporal, none when tracing is off: the SDK's OpenTelemetry
// interceptor (spans for starting, signalling and running workflows and
// activities, the context in Temporal headers), then signalParent. Set
// on the client, they apply to every worker built on it too.
func TemporalInterceptors() ([]interceptor.ClientInterceptor, error) {
	if !Enabled() {
		return nil, nil
	}
	ti, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:            otel.GetTracerProvider().Tracer(temporalTracer),
		TextMapPropagator: propagator,
		SpanContextKey:    spanKey{},
	})
	if err != nil {
		return nil, fmt.Errorf("tracing: temporal interceptor: %w", err)
	}
	// Order matters: the first is the outermost, so signalParent's
	// HandleSignal sees the span the SDK's interceptor started for the
	// signal, and its outbound calls run before the SDK's starts the
	// activity's or child's span.
	return []interceptor.ClientInterceptor{ti, &signalParent{}}, nil
}

// signalParent puts what a long-lived workflow does after a signal into
// the signal's trace. The SDK's interceptor parents a workflow's
// activities and children to the span of its run, so every booking of a
// customer's months-long conversation would land in the trace of the
// message that started it; each message arrives as a signal whose header
// carries the trace of its webhook. signalParent remembers the span of the
// latest signal handled and makes it the parent of the workflow's next
// activities, child workflows and signals. It changes no command, so
// histories replay unchanged; while replaying the SDK starts no signal
// spans, and the run's span stays the parent.
type signalParent struct {
	interceptor.InterceptorBase
}

// InterceptWorkflow implements interceptor.WorkerInterceptor.
func (*signalParent) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	in := &signalInbound{}
	in.Next = next
	return in
}

type signalInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	// last is the span of the latest signal handled (the SDK's
	// interceptor.TracerSpan), nil before the first.
	last any
}

func (i *signalInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	out := &signalOutbound{in: i}
	out.Next = outbound
	return i.Next.Init(out)
}

func (i *signalInbound) HandleSignal(ctx workflow.Context, in *interceptor.HandleSignalInput) error {
	if span := ctx.Value(spanKey{}); span != nil {
		i.last = span
	}
	return i.Next.HandleSignal(ctx, in)
}

type signalOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	in *signalInbound
}

// parent is ctx with the latest signal's span as the current span.
func (o *signalOutbound) parent(ctx workflow.Context) workflow.Context {
	if o.in.last == nil {
		return ctx
	}
	return workflow.WithValue(ctx, spanKey{}, o.in.last)
}

func (o *signalOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	return o.Next.ExecuteActivity(o.parent(ctx), activityType, args...)
}

func (o *signalOutbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	return o.Next.ExecuteLocalActivity(o.parent(ctx), activityType, args...)
}

func (o *signalOutbound) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	return o.Next.ExecuteChildWorkflow(o.parent(ctx), childWorkflowType, args...)
}

func (o *signalOutbound) SignalExternalWorkflow(ctx workflow.Context, workflowID, runID, signalName string, arg any) workflow.Future {
	return o.Next.SignalExternalWorkflow(o.parent(ctx), workflowID, runID, signalName, arg)
}

func (o *signalOutbound) SignalChildWorkflow(ctx workflow.Context, workflowID, signalName string, arg any) workflow.Future {
	return o.Next.SignalChildWorkflow(o.parent(ctx), workflowID, signalName, arg)
}
