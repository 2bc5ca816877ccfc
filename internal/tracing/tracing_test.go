package tracing_test

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/bookonce/bookonce/internal/tracing"
)

// collector is an OTLP/gRPC trace collector on a loopback port that keeps
// the names and service names of the spans it receives.
type collector struct {
	collectorpb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans map[string]string // span name -> service.name
}

func (c *collector) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans[s.GetName()] = service
			}
		}
	}
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

func (c *collector) received() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.spans)
}

// startCollector serves a collector on a loopback port and returns it
// with its endpoint URL.
func startCollector(t *testing.T) (*collector, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &collector{spans: map[string]string{}}
	srv := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(srv, c)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-done; !errors.Is(err, grpc.ErrServerStopped) { // stopped before it served
			require.NoError(t, err)
		}
	})
	return c, "http://" + l.Addr().String()
}

// TestSetupExportsOverOTLPOnlyWithAnEndpoint: with
// OTEL_EXPORTER_OTLP_ENDPOINT set, Setup installs a provider whose spans
// reach the collector there under the service name (OTEL_SERVICE_NAME
// when set); unset, it installs nothing and leaves handlers, transports
// and Temporal clients unwrapped.
func TestSetupExportsOverOTLPOnlyWithAnEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name, serviceEnv, wantService string
		endpoint                      bool
	}{
		{name: "unset: no exporter, nothing wrapped"},
		{name: "set: spans reach the collector", endpoint: true, wantService: "bookonce-test"},
		{name: "set with OTEL_SERVICE_NAME", endpoint: true, serviceEnv: "booking-worker", wantService: "booking-worker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			col, url := startCollector(t)
			t.Setenv(tracing.EnvTracesEndpoint, "")
			t.Setenv(tracing.EnvEndpoint, "")
			t.Setenv("OTEL_SERVICE_NAME", tc.serviceEnv)
			if tc.endpoint {
				t.Setenv(tracing.EnvEndpoint, url)
			}
			shutdown, err := tracing.Setup(ctx, "bookonce-test")
			require.NoError(t, err)
			t.Cleanup(tracing.Uninstall)
			require.Equal(t, tc.endpoint, tracing.Enabled())

			interceptors, err := tracing.TemporalInterceptors()
			require.NoError(t, err)
			if !tc.endpoint {
				require.Nil(t, tracing.Transport(nil), "the default transport, untouched")
				require.Empty(t, interceptors)
				_, span := tracing.Start(ctx, "nothing")
				require.False(t, span.IsRecording())
				_, global := otel.Tracer("x").Start(ctx, "y")
				require.False(t, global.IsRecording(), "the global provider stays the no-op")
				require.NoError(t, shutdown(ctx))
				require.Empty(t, col.received())
				return
			}
			require.IsType(t, &otelhttp.Transport{}, tracing.Transport(nil))
			require.Len(t, interceptors, 2)
			_, span := tracing.Start(ctx, "outbox.send")
			require.True(t, span.IsRecording())
			span.End()
			require.NoError(t, shutdown(ctx), "flushes to the collector")
			require.Equal(t, map[string]string{"outbox.send": tc.wantService}, col.received())
		})
	}
}

// TestSpansMaskPhoneNumbers: what libraries write on spans (otelhttp's
// URL with its query, a workflow ID in a name or an error) shows a
// customer's number masked, as the logs do.
func TestSpansMaskPhoneNumbers(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(tracing.Uninstall)
	srv := httptest.NewServer(tracing.Handler("calendar", false, http.NotFoundHandler()))
	t.Cleanup(srv.Close)

	client := &http.Client{Transport: tracing.Transport(nil)}
	resp, err := client.Get(srv.URL + "/v1/bookings?customer=" + url.QueryEscape("+4915112345678"))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	_, span := otel.Tracer("test").Start(context.Background(), "RunWorkflow:customer:demo:+4915112345678")
	span.SetAttributes(attribute.String("temporalWorkflowID", "customer:demo:+4915112345678"))
	span.RecordError(errors.New("signal conversation customer:demo:+4915112345678: unavailable"))
	span.End()

	var texts []string
	for _, sp := range rec.Ended() {
		texts = append(texts, sp.Name())
		for _, a := range sp.Attributes() {
			texts = append(texts, a.Value.String())
		}
		for _, ev := range sp.Events() {
			for _, a := range ev.Attributes {
				texts = append(texts, a.Value.String())
			}
		}
	}
	all := strings.Join(texts, "\n")
	require.NotContains(t, all, "15112345678")
	require.Contains(t, all, "customer=+49·········78", "the client span's URL, masked")
	require.Contains(t, all, "customer:demo:+49·········78", "the workflow ID, masked")
}
