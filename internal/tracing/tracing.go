// Package tracing is bookonce's one home for OpenTelemetry traces: the
// process's TracerProvider (exporting over OTLP/gRPC only when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
// set), the HTTP server and client instrumentation (otelhttp), the
// Temporal interceptors that carry a trace from the webhook through the
// workflows into the activities, and the attribute names a booking's spans
// carry. With no endpoint nothing is installed: handlers, transports and
// Temporal clients are left exactly as they are, so tracing costs nothing
// when it is off.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Attribute names of bookonce's own span attributes. Phone numbers and
// message texts are never attributes.
const (
	// OperationKey is the idempotency key an activity sends downstream:
	// the one name for the operation across retries, processes and APIs.
	OperationKey attribute.Key = "bookonce.operation_key"
	// Tenant is the shop the booking belongs to.
	Tenant attribute.Key = "bookonce.tenant"
	// AppointmentID is the appointment's ID (its workflow ID, the
	// booking reference downstream).
	AppointmentID attribute.Key = "bookonce.appointment_id"
	// HoldID is the calendar hold an activity placed or confirmed.
	HoldID attribute.Key = "bookonce.hold_id"
	// ReservationID is the calendar reservation (booking) a hold became.
	ReservationID attribute.Key = "bookonce.reservation_id"
	// PaymentIntentID is the payment intent of the deposit.
	PaymentIntentID attribute.Key = "bookonce.payment_intent_id"
	// MessageSID is the SID Twilio gave a sent message.
	MessageSID attribute.Key = "bookonce.message_sid"
)

// Environment variables (the OpenTelemetry standard names) that turn
// exporting on; the exporter reads them and the other OTEL_EXPORTER_OTLP_*
// variables (headers, certificates, timeout) itself.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
)

// propagator is what crosses process boundaries: W3C trace context and
// baggage, in HTTP headers and in Temporal headers alike.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// enabled says whether a recording TracerProvider is installed; every
// wrapper checks it when it is built, so that without one nothing is
// wrapped at all.
var enabled atomic.Bool

// Enabled reports whether spans are recorded (Setup found an endpoint, or
// a test installed a provider).
func Enabled() bool { return enabled.Load() }

// Shutdown flushes the spans not yet exported and stops the exporter.
type Shutdown func(context.Context) error

// configured reports whether getenv names an OTLP endpoint for traces.
func configured(getenv func(string) string) bool {
	return getenv(EnvEndpoint) != "" || getenv(EnvTracesEndpoint) != ""
}

// Setup installs the process's TracerProvider: with an OTLP endpoint in
// the environment, one that batches spans to it over gRPC, with service
// as service.name unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES)
// says otherwise; without one, none (the global no-op stays, Enabled is
// false). The caller runs the returned Shutdown on exit.
func Setup(ctx context.Context, service string) (Shutdown, error) {
	if !configured(os.Getenv) {
		return func(context.Context) error { return nil }, nil
	}
	exporter, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, errors.Join(fmt.Errorf("tracing: resource: %w", err), exporter.Shutdown(ctx))
	}
	// The sampler is the SDK's default (parent-based, always on), or
	// OTEL_TRACES_SAMPLER when set.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	Install(tp)
	return func(ctx context.Context) error {
		Uninstall()
		return tp.Shutdown(ctx)
	}, nil
}

// Install makes tp the process's TracerProvider, behind the masking of
// phone numbers, and turns the wrappers on; tests install one with an
// in-memory recorder. Build the services and Temporal clients after it:
// they take the provider when they are built.
func Install(tp trace.TracerProvider) {
	otel.SetTracerProvider(maskingProvider{tp})
	otel.SetTextMapPropagator(propagator)
	enabled.Store(true)
}

// Uninstall puts the no-op provider back; what was built while a provider
// was installed keeps using it.
func Uninstall() {
	enabled.Store(false)
	otel.SetTracerProvider(noop.NewTracerProvider())
}

// Handler wraps a service's handler in an otelhttp server span named
// after service (and the route once the mux has matched it). A public
// service (the gateway's webhooks) starts a new trace for every request
// and only links to a trace context the caller sent: the internet does
// not choose our trace IDs. /healthz and /metrics are not traced.
func Handler(service string, public bool, h http.Handler) http.Handler {
	if !Enabled() {
		return h
	}
	opts := []otelhttp.Option{
		otelhttp.WithTracerProvider(otel.GetTracerProvider()),
		otelhttp.WithPropagators(propagator),
		otelhttp.WithFilter(func(r *http.Request) bool { return r.URL.Path != "/healthz" && r.URL.Path != "/metrics" }),
		otelhttp.WithSpanNameFormatter(serverSpanName),
	}
	if public {
		opts = append(opts, otelhttp.WithPublicEndpointFn(func(*http.Request) bool { return true }))
	}
	return otelhttp.NewHandler(h, service, opts...)
}

// serverSpanName names a server span after the service and the route the
// service's mux matched ("gateway POST /webhooks/twilio/whatsapp"), or
// the method when the route is a whole API mounted at "/" (the calendar's
// and payment API's own muxes match behind authentication, on a copy of
// the request) or not matched yet. The span's url.path has the rest.
func serverSpanName(service string, r *http.Request) string {
	if r.Pattern != "" && r.Pattern != "/" {
		return service + " " + r.Pattern
	}
	return service + " " + r.Method
}

// Transport wraps an HTTP client's transport (nil: http.DefaultTransport)
// in otelhttp client spans that send the trace context downstream. With
// tracing off it returns base unchanged.
func Transport(base http.RoundTripper) http.RoundTripper {
	if !Enabled() {
		return base
	}
	return otelhttp.NewTransport(base, otelhttp.WithTracerProvider(otel.GetTracerProvider()), otelhttp.WithPropagators(propagator))
}

// tracerName is the instrumentation scope of bookonce's own spans.
const tracerName = "github.com/bookonce/bookonce"

// Start starts a span of bookonce's own (one that no library starts,
// such as the outbox relay's send) as a child of the span in ctx; with
// tracing off it returns ctx and a span that does nothing.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !Enabled() {
		return ctx, noop.Span{}
	}
	return otel.Tracer(tracerName).Start(ctx, name, trace.WithAttributes(attrs...))
}

// Tag sets attributes on the span running in ctx, if it records; a
// downstream ID is tagged as soon as it is learned.
func Tag(ctx context.Context, attrs ...attribute.KeyValue) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attrs...)
	}
}
