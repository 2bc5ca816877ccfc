package stack_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// tracedStack is the whole stack as the commands assemble it (the
// gateway's public service, a worker dialled by stack.Dial, the calendar
// and payment APIs, the outbox relay to a fake Twilio), built after an
// in-memory span recorder was installed.
type tracedStack struct {
	pool *pgxpool.Pool
	sim  twilio.Simulator
	rec  *tracetest.SpanRecorder
}

const tracedAuthToken = "test-twilio-token"

func newTracedStack(t *testing.T) tracedStack {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(tracing.Uninstall)

	ctx := context.Background()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t) // card deposits: one webhook books
	cfg.TwilioAuthToken = tracedAuthToken
	cfg.TaskQueue = testsupport.TaskQueue(t)
	cfg.TemporalAddress = temporaltest.HostPort(t)
	cfg.CalendarURL, cfg.PaymentsURL = stacktest.CalendarAPI(t, cfg, pool).URL, stacktest.PaymentsAPI(t, cfg, pool).URL
	log := stack.Logger(cfg, testsupport.LogWriter(t))
	tenants := testsupport.Tenants(t, pool)

	tc, err := stack.Dial(ctx, cfg, log)
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	w, _ := stack.Worker(tc, cfg, pool, tenants)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	gw, reg := stack.Gateway(cfg, pool, tc, tenants, log)
	gw.PublicBaseURL = "https://bookonce.example" // what Twilio signs
	public := httptest.NewServer(stack.GatewayService(gw, reg, log).Mux())
	t.Cleanup(public.Close)

	stacktest.TwilioRelay(t, cfg, pool, log, 50*time.Millisecond)
	return tracedStack{pool: pool, rec: rec,
		sim: twilio.Simulator{GatewayURL: public.URL, PublicBaseURL: "https://bookonce.example", AuthToken: tracedAuthToken}}
}

func (s tracedStack) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// whatsApp posts a signed WhatsApp message and requires a 200.
func (s tracedStack) whatsApp(t *testing.T, customer, text string) {
	t.Helper()
	status, body, err := s.sim.Post(context.Background(), channels.RouteWhatsApp, twilio.WhatsApp(twilio.NewSID("SM"), customer, text))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, body)
}

// TestOneTraceSpansAWholeBooking sends a customer's first message (which
// starts the conversation workflow in its webhook's trace), then a
// booking wish in a second webhook, and waits until the booking is
// confirmed and its confirmation reached the fake Twilio. The second
// webhook's trace then holds the whole booking: the webhook's server span
// as its root, the signal into the conversation, the appointment and
// payment workflows and their activities, with the operation key and the
// downstream IDs as attributes. The calendar and payment APIs' listeners
// are public, so their server spans start traces of their own, linked to
// the booking's.
// No span carries the customer's phone number.
func TestOneTraceSpansAWholeBooking(t *testing.T) {
	s := newTracedStack(t)
	customer := fmt.Sprintf("+49151%08d", rand.IntN(100000000))
	s.whatsApp(t, customer, "Hallo")
	testsupport.Eventually(t, 60*time.Second, "the answer to the first message", func() bool {
		return s.count(t, `SELECT count(*) FROM outbox_messages WHERE kind LIKE 'reply:%' AND state = 'sent'`) >= 1
	})
	day := testsupport.NextWeekdayAfter(t, time.Tuesday, 14, 48*time.Hour)
	wish := time.Now()
	s.whatsApp(t, customer, fmt.Sprintf("Reifenwechsel am %d.%d. um 14 Uhr", day.Day(), int(day.Month())))
	testsupport.Eventually(t, 90*time.Second, "the confirmed booking and its confirmation at Twilio", func() bool {
		return s.count(t, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed'`) == 1 &&
			s.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation' AND state IN ('sent', 'delivered')`) == 1
	})

	var spans []sdktrace.ReadOnlySpan // started: the appointment's run span ends after its lifecycle took over
	for _, sp := range s.rec.Started() {
		spans = append(spans, sp)
	}
	inTrace := sameTrace(spans, findSpan(t, spans, "RunActivity:HoldSlot"))
	requireBookingTrace(t, inTrace, wish)
	requireLinked(t, spans, inTrace, "payments ")
	requireLinked(t, spans, inTrace, "calendar ")
	s.requireDownstreamIDs(t, inTrace)
	s.requireSendTraced(t, spans, findSpan(t, inTrace, "RunActivity:SendConfirmation"))
	requireNoPhoneNumber(t, spans, customer)
}

// requireBookingTrace requires that the trace is the booking wish's: its
// webhook the root, then the signal, the workflows and the activities;
// the conversation's run is not in it (it belongs to the first message's
// trace), nor are the public calendar and payment APIs (requireLinked).
func requireBookingTrace(t *testing.T, inTrace []sdktrace.ReadOnlySpan, wish time.Time) {
	t.Helper()
	root := findSpan(t, inTrace, "gateway POST "+channels.RouteWhatsApp)
	require.Equal(t, trace.SpanKindServer, root.SpanKind())
	require.False(t, root.Parent().IsValid(), "the webhook starts the booking's trace")
	require.True(t, root.StartTime().After(wish), "the booking is in the wish's trace, not in the first message's")
	for _, name := range []string{
		"SignalWithStartWorkflow:ConversationWorkflow", "HandleSignal:" + conversation.SignalInbound,
		"RunActivity:ExtractIntent", "RunActivity:DecideDedup", "StartChildWorkflow:AppointmentWorkflow",
		"RunWorkflow:AppointmentWorkflow",
		"RunActivity:HoldSlot", "RunActivity:AuthorizeDeposit", "RunActivity:ConfirmHold", "RunActivity:CaptureDeposit",
		"RunActivity:SendConfirmation",
	} {
		findSpan(t, inTrace, name)
	}
	for _, sp := range inTrace {
		require.NotEqual(t, "RunWorkflow:ConversationWorkflow", sp.Name())
		require.False(t, strings.HasPrefix(sp.Name(), "payments "), "the public payment API joined the caller's trace: %s", sp.Name())
		require.False(t, strings.HasPrefix(sp.Name(), "calendar "), "the public calendar API joined the caller's trace: %s", sp.Name())
	}
}

// requireLinked requires that the server spans of the API whose span
// names start with prefix (the payment API's, the calendar API's) are
// roots of traces of their own (its listener is public: a trace context
// from the internet is only linked to, never joined) and that the
// booking's calls reach them by a link from the booking's trace.
func requireLinked(t *testing.T, spans, inTrace []sdktrace.ReadOnlySpan, prefix string) {
	t.Helper()
	booking := inTrace[0].SpanContext().TraceID()
	linked := 0
	for _, sp := range spans {
		if !strings.HasPrefix(sp.Name(), prefix) {
			continue
		}
		require.Equal(t, trace.SpanKindServer, sp.SpanKind(), sp.Name())
		require.False(t, sp.Parent().IsValid(), "%s: a root, not the caller's child", sp.Name())
		for _, l := range sp.Links() {
			if l.SpanContext.TraceID() == booking {
				linked++
			}
		}
	}
	require.Positive(t, linked, "no %q span links to the booking's trace", prefix)
}

// requireDownstreamIDs requires the operation key, tenant, appointment
// and the downstream IDs on the activities' spans, each the ID of the row
// the APIs stored.
func (s tracedStack) requireDownstreamIDs(t *testing.T, inTrace []sdktrace.ReadOnlySpan) {
	t.Helper()
	hold := findSpan(t, inTrace, "RunActivity:HoldSlot")
	require.True(t, strings.HasPrefix(attr(t, hold, tracing.OperationKey), "bko1_"), "HoldSlot's idempotency key")
	require.Equal(t, "demo", attr(t, hold, tracing.Tenant))
	appointment := attr(t, hold, tracing.AppointmentID)
	require.True(t, strings.HasPrefix(appointment, "appointment:demo:"), appointment)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE id = $1 AND reference = $2`, attr(t, hold, tracing.HoldID), appointment))
	confirm := findSpan(t, inTrace, "RunActivity:ConfirmHold")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE booking_id = $1 AND status = 'confirmed'`, attr(t, confirm, tracing.ReservationID)))
	authorize := findSpan(t, inTrace, "RunActivity:AuthorizeDeposit")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM payment_intents WHERE id = $1`, attr(t, authorize, tracing.PaymentIntentID)))
}

// requireSendTraced requires the relay's send span of the confirmation:
// found by the operation key of the activity that reserved it, naming
// the SID the outbox recorded, with the fake Twilio's server span in its
// trace.
func (s tracedStack) requireSendTraced(t *testing.T, spans []sdktrace.ReadOnlySpan, reserved sdktrace.ReadOnlySpan) {
	t.Helper()
	var sid string
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT provider_id FROM outbox_messages WHERE kind = 'confirmation'`).Scan(&sid))
	send := spanWith(t, spans, tracing.OperationKey, attr(t, reserved, tracing.OperationKey), outbox.SpanSend)
	require.Equal(t, sid, attr(t, send, tracing.MessageSID), "the send names Twilio's message SID")
	for _, sp := range sameTrace(spans, send) {
		if sp.SpanKind() == trace.SpanKindServer && strings.HasPrefix(sp.Name(), twilio.FakeServiceName+" POST ") {
			return
		}
	}
	t.Fatal("the fake Twilio's server span is not in the send's trace")
}

// sameTrace is the spans in of's trace.
func sameTrace(spans []sdktrace.ReadOnlySpan, of sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var in []sdktrace.ReadOnlySpan
	for _, sp := range spans {
		if sp.SpanContext().TraceID() == of.SpanContext().TraceID() {
			in = append(in, sp)
		}
	}
	return in
}

// findSpan is the first span whose name starts with prefix.
func findSpan(t *testing.T, spans []sdktrace.ReadOnlySpan, prefix string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, sp := range spans {
		if strings.HasPrefix(sp.Name(), prefix) {
			return sp
		}
	}
	var names []string
	for _, sp := range spans {
		names = append(names, sp.Name())
	}
	t.Fatalf("no span %q among %q", prefix, names)
	return nil
}

// spanWith is the span named name whose attribute key has value.
func spanWith(t *testing.T, spans []sdktrace.ReadOnlySpan, key attribute.Key, value, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, sp := range spans {
		for _, a := range sp.Attributes() {
			if sp.Name() == name && a.Key == key && a.Value.AsString() == value {
				return sp
			}
		}
	}
	t.Fatalf("no span %s with %s=%s", name, key, value)
	return nil
}

// attr is a span's string attribute, required to be set.
func attr(t *testing.T, sp sdktrace.ReadOnlySpan, key attribute.Key) string {
	t.Helper()
	for _, a := range sp.Attributes() {
		if a.Key == key {
			return a.Value.AsString()
		}
	}
	t.Fatalf("span %s has no attribute %s: %v", sp.Name(), key, sp.Attributes())
	return ""
}

// requireNoPhoneNumber fails if the customer's number (its national
// digits, in any notation) is in a span's name, attributes, status or
// events.
func requireNoPhoneNumber(t *testing.T, spans []sdktrace.ReadOnlySpan, customer string) {
	t.Helper()
	digits := strings.TrimPrefix(customer, "+49")
	for _, sp := range spans {
		texts := []string{sp.Name(), sp.Status().Description}
		for _, a := range sp.Attributes() {
			texts = append(texts, a.Value.String())
		}
		for _, ev := range sp.Events() {
			for _, a := range ev.Attributes {
				texts = append(texts, a.Value.String())
			}
		}
		for _, text := range texts {
			require.NotContains(t, text, digits, "span %s", sp.Name())
		}
	}
}
