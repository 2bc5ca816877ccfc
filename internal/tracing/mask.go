package tracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/bookonce/bookonce/internal/mask"
)

// maskingProvider is the installed TracerProvider: its spans mask phone
// numbers in everything libraries write on them. The Temporal SDK's
// interceptor tags spans with workflow IDs, and a conversation's ID names
// the customer's number (conversation.WorkflowID); otelhttp's
// client spans quote the URL with its query (the calendar's
// ?customer=%2B49…).
type maskingProvider struct{ trace.TracerProvider }

func (p maskingProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return maskingTracer{p.TracerProvider.Tracer(name, opts...)}
}

type maskingTracer struct{ trace.Tracer }

func (t maskingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	ctx, span := t.Tracer.Start(ctx, mask.Phones(name), opts...)
	masked := maskedSpan{span}
	return trace.ContextWithSpan(ctx, masked), masked
}

// maskedSpan masks phone numbers in string attributes, the status text,
// recorded errors and the name. Attributes given when a span starts are
// not masked: bookonce's own (Start) never hold a number, and the
// libraries' set theirs afterwards.
type maskedSpan struct{ trace.Span }

func (s maskedSpan) SetAttributes(kv ...attribute.KeyValue) {
	for i, a := range kv {
		if a.Value.Type() == attribute.STRING {
			kv[i] = a.Key.String(mask.Phones(a.Value.AsString()))
		}
	}
	s.Span.SetAttributes(kv...)
}

func (s maskedSpan) SetStatus(code codes.Code, description string) {
	s.Span.SetStatus(code, mask.Phones(description))
}

func (s maskedSpan) RecordError(err error, opts ...trace.EventOption) {
	if err != nil {
		err = errors.New(mask.Phones(err.Error()))
	}
	s.Span.RecordError(err, opts...)
}

func (s maskedSpan) SetName(name string) { s.Span.SetName(mask.Phones(name)) }
