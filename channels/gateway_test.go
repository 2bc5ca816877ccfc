package channels_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	twclient "github.com/twilio/twilio-go/client"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/twilio"
)

type env struct {
	pool *pgxpool.Pool
	tc   client.Client
	sim  twilio.Simulator
	reg  *prometheus.Registry
	gw   *channels.Gateway
	url  string
	// admin is the gateway's admin listener (review and booking APIs, ops
	// page); url is the public one (webhooks).
	admin string
}

const authToken = "test-twilio-token"

// newEnv starts a gateway and a worker; configure changes their
// configuration first.
func newEnv(t *testing.T, configure ...func(*config.Config)) env {
	t.Helper()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.TwilioAuthToken = authToken
	for _, c := range configure {
		c(&cfg)
	}
	cfg.CalendarURL = stacktest.CalendarAPI(t, cfg, pool).URL
	cfg.PaymentsURL = stacktest.PaymentsAPI(t, cfg, pool).URL
	cfg.TaskQueue = testsupport.TaskQueue(t)
	tc := temporaltest.Temporal(t)
	testsupport.Worker(t, tc, cfg.TaskQueue, func(r worker.Registry) {
		acts := stack.NewActivities(cfg, pool, testsupport.Tenants(t, pool), tc)
		acts.Temporal = tc // as stack.Worker: conversations move from legacy IDs
		stack.Register(r, acts)
	})
	gw, reg := stack.Gateway(cfg, pool, tc, testsupport.Tenants(t, pool), stack.Logger(cfg, testLog{t}))
	srv, admin := serveGateway(t, gw)
	// Twilio signs the public URL; the gateway must use it, not Host.
	gw.PublicBaseURL = "https://bookonce.example"
	return env{pool: pool, tc: tc, reg: reg, gw: gw, url: srv.URL, admin: admin.URL,
		sim: twilio.Simulator{GatewayURL: srv.URL, PublicBaseURL: "https://bookonce.example", AuthToken: authToken}}
}

// serveGateway serves the gateway's public and admin handlers on two
// loopback servers, as the gateway process does on its two listeners.
func serveGateway(t *testing.T, gw *channels.Gateway) (public, admin *httptest.Server) {
	t.Helper()
	public, admin = httptest.NewServer(gw.Handler()), httptest.NewServer(gw.AdminHandler())
	t.Cleanup(public.Close)
	t.Cleanup(admin.Close)
	return public, admin
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// resolveCase resolves a review case through the authenticated review
// API, as a person does, and requires it accepted.
func (e env) resolveCase(t *testing.T, caseID, action string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.admin+"/v1/review-cases/"+caseID+"/resolve", strings.NewReader(`{"action":"`+action+`"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+config.DefaultAPIToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func (e env) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// newCustomer is a fresh German mobile number: the conversation workflow
// of a customer is long-lived and the Temporal server is shared by the
// package (and by reruns with -count), so each test talks as someone new.
func newCustomer() string { return fmt.Sprintf("+49151%08d", rand.IntN(100000000)) }

// nextTuesday is the day of the next Tuesday at least
// testsupport.SlotLead away, named in the wish by its date ("8.12."), so
// a booking on it may be cancelled or moved free whatever day the test runs.
func nextTuesday(t testing.TB) time.Time { return testsupport.Slot(t, time.Tuesday, 0) }

func dateText(d time.Time) string { return fmt.Sprintf("%d.%d.", d.Day(), int(d.Month())) }

func TestSignatureHelperMatchesTwilio(t *testing.T) {
	t.Parallel()
	form := url.Values{"Body": {"Hallo"}, "From": {"whatsapp:+4915112345678"}, "MessageSid": {"SM1"}}
	sig := twilio.Sign(authToken, "https://x.example/webhooks/twilio/whatsapp", form)
	v := twclient.NewRequestValidator(authToken)
	params := map[string]string{}
	for k := range form {
		params[k] = form.Get(k)
	}
	require.True(t, v.Validate("https://x.example/webhooks/twilio/whatsapp", params, sig))
	require.False(t, v.Validate("https://x.example/webhooks/twilio/voice", params, sig))
}

func TestUnsignedOrWronglySignedWebhooksAreRejected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	form := twilio.WhatsApp("SMbad", "+4915112345678", "Dienstag 14 Uhr Reifenwechsel")
	cases := map[string]func(*http.Request){
		"no signature": func(r *http.Request) {},
		"wrong token": func(r *http.Request) {
			r.Header.Set("X-Twilio-Signature", twilio.Sign("other", "https://bookonce.example"+channels.RouteWhatsApp, form))
		},
		"signed for host": func(r *http.Request) {
			r.Header.Set("X-Twilio-Signature", twilio.Sign(authToken, e.url+channels.RouteWhatsApp, form))
		},
	}
	for name, sign := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.url+channels.RouteWhatsApp, strings.NewReader(form.Encode()))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			sign(req)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
		})
	}
	require.Zero(t, e.count(t, `SELECT count(*) FROM inbox_events`), "nothing stored")
}

// TestMatrix05WebhookReplayedThreeTimes proves failure-matrix item 5 (a
// webhook replayed with the same delivery ID, three times, also
// concurrently): three identical deliveries at once and a late fourth.
// Three duplicates counted; what reached the customer, whatever the
// reference: one booking at the slot, one captured deposit, and at the
// fake Twilio one reply and one confirmation.
func TestMatrix05WebhookReplayedThreeTimes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake := e.twilioRelay(t)
	ctx := context.Background()
	day, customer := nextTuesday(t), newCustomer()
	form := twilio.WhatsApp("SMdup1", customer, "Reifenwechsel am "+dateText(day)+" um 14 Uhr")
	deliveries := make([]delivery, 3)
	for i := range deliveries {
		deliveries[i] = delivery{channels.RouteWhatsApp, form}
	}
	e.postAtOnce(t, deliveries...)
	status, _, err := e.sim.Post(ctx, channels.RouteWhatsApp, form) // a late redelivery
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)

	require.Equal(t, 3.0, testutil.ToFloat64(e.gw.Metrics.DuplicatesBlocked().WithLabelValues("inbox", "demo", channels.RouteWhatsApp)),
		"three redeliveries blocked at the inbox")
	e.requireBookings(t, 1)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM booking_intents`))
	require.Equal(t, oneBooking, testsupport.CountEffects(t, e.pool, fake, "demo", customer, at(day, 14)),
		"one booking at the slot, one reply and one confirmation at Twilio, not three")
	require.Len(t, testsupport.Delivered(t, e.pool, fake, testsupport.ConversationID(t, "demo", customer), customer, "Danke! Wir buchen"), 1,
		"one reply, not three")
}

// oneBooking is what reaches the customer of a booking made in a
// conversation: one confirmed reservation, its deposit captured once, and
// at the fake Twilio the reply to the wish and the confirmation.
var oneBooking = testsupport.Effects{
	Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{"succeeded": 1}, Captured: 2000, Messages: 2,
}

// at is hour:00 on day, in day's location (Berlin, as nextTuesday).
func at(day time.Time, hour int) time.Time {
	return time.Date(day.Year(), day.Month(), day.Day(), hour, 0, 0, 0, day.Location())
}

// twilioRelay runs the outbox relay against a fake Twilio for the test's
// lifetime and returns the fake: what it accepted reached the customer.
// The simulator tells the fake of every message a customer sends, as
// Twilio sees the messages it relays (WhatsApp's window, opt-outs).
func (e *env) twilioRelay(t *testing.T) *twilio.FakeServer {
	t.Helper()
	cfg := testsupport.Config(t)
	fake := stacktest.TwilioRelay(t, cfg, e.pool, stack.Logger(cfg, testLog{t}), 100*time.Millisecond)
	e.sim.Twilio = fake
	return fake
}

// TestMatrix09VoiceAndWhatsAppAtOnce proves failure-matrix item 9 (voice
// and WhatsApp deliver the same intent at the same moment): the caller's
// sentence and a WhatsApp message with the same wish are posted together.
// One new decision and one merge, both events on one intent; what reached
// the customer, whatever the reference: one booking at the slot, one
// captured deposit, and at the fake Twilio one reply per event (the merged
// one is told the booking is under way) and one confirmation.
func TestMatrix09VoiceAndWhatsAppAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake := e.twilioRelay(t)
	ctx := context.Background()
	day := nextTuesday(t)
	call, customer := twilio.NewSID("CA"), newCustomer()
	status, _, err := e.sim.Post(ctx, channels.RouteVoice, url.Values{"CallSid": {call}, "From": {customer}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = $1 AND state = 'delivered'`, call+":start"),
		"a call's start has nothing to hand on: the relay must never send it to the conversation")

	e.postAtOnce(t,
		delivery{channels.RouteVoiceGather + "?step=1", twilio.Speech(call, customer, "Am "+dateText(day)+" um 14 Uhr Reifenwechsel")},
		delivery{channels.RouteWhatsApp, twilio.WhatsApp(twilio.NewSID("SM"), customer, "Ja, "+dateText(day)+" 14 Uhr Reifenwechsel passt")},
	)
	testsupport.Eventually(t, 60*time.Second, "both events decided", func() bool {
		return e.count(t, `SELECT count(*) FROM dedup_decisions`) == 2
	})
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM dedup_decisions WHERE decision = 'new'`))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM dedup_decisions WHERE decision = 'merge'`))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM booking_intents WHERE cardinality(events) = 2`), "both events linked to the one intent")
	e.requireBookings(t, 1)
	both := oneBooking
	both.Messages = 3 // each event is answered (a caller by SMS): the new one, and the merged one with "bereits in Bearbeitung"
	require.Equal(t, both, testsupport.CountEffects(t, e.pool, fake, "demo", customer, at(day, 14)),
		"one booking at the slot; at Twilio one reply per event and one confirmation")
	require.Zero(t, e.count(t, `SELECT count(*) FROM review_cases`))
}

// TestDifferentRequestsInWindowGoToReviewThenSeparate: 14:00 tire change and
// 14:00 inspection from one number: a review case, not a merge and not two
// silent bookings; resolving "separate" books the second.
func TestDifferentRequestsInWindowGoToReviewThenSeparate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	day, customer := nextTuesday(t), newCustomer()
	_, _, err := e.sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp("SMa", customer, "Reifenwechsel am "+dateText(day)+" um 14 Uhr"))
	require.NoError(t, err)
	testsupport.Eventually(t, 30*time.Second, "the first intent", func() bool {
		return e.count(t, `SELECT count(*) FROM dedup_decisions WHERE decision = 'new'`) == 1
	})
	_, _, err = e.sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp("SMb", customer, "Inspektion am "+dateText(day)+" um 14 Uhr"))
	require.NoError(t, err)
	var caseID string
	testsupport.Eventually(t, 30*time.Second, "a review case", func() bool {
		return e.pool.QueryRow(ctx, `SELECT id FROM review_cases WHERE reason = 'potential_duplicate' AND status = 'open'`).Scan(&caseID) == nil
	})
	testsupport.Eventually(t, 60*time.Second, "the first booking confirmed", func() bool {
		return e.count(t, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed'`) == 1
	})
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM booking_intents`), "the second is not booked silently")
	q := `CustomerKey = "` + string(testsupport.CustomerKey(t, "demo", customer)) + `" AND BookingStatus = "NeedsReview"`
	testsupport.Eventually(t, 20*time.Second, "the Web UI filter to find the conversation waiting for review", func() bool {
		resp, err := e.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		return err == nil && len(resp.GetExecutions()) == 1
	})

	// Resolve through the authenticated API, twice (a double click).
	for range 2 {
		e.resolveCase(t, caseID, "separate")
	}
	testsupport.Eventually(t, 60*time.Second, "the second booking confirmed", func() bool {
		return e.count(t, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed'`) == 2
	})
	require.Equal(t, 2, e.count(t, `SELECT count(*) FROM booking_intents`))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM review_cases WHERE status = 'resolved' AND resolution = 'separate'`))
}

func TestTemporalDownEventStaysPendingAndRelayDelivers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// A gateway whose Temporal client points nowhere accepts and keeps.
	down, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	require.NoError(t, err)
	broken := *e.gw
	broken.Temporal = down
	srv := httptest.NewServer(broken.Handler())
	defer srv.Close()
	sim := e.sim
	sim.GatewayURL = srv.URL
	customer := newCustomer()
	status, _, err := sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp("SMlate", customer, "Hallo"))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "accepted: nothing accepted is lost")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = 'SMlate' AND state = 'pending'`))
	n, err := e.gw.RelayPending(ctx, -time.Second)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = 'SMlate' AND state = 'delivered'`))
	testsupport.Eventually(t, 30*time.Second, "the conversation to answer", func() bool {
		return e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:SMlate'`) == 1
	})
	_, err = e.tc.DescribeWorkflowExecution(ctx, testsupport.ConversationID(t, "demo", customer), "")
	require.NoError(t, err)
}

// TestStatusCallbacksNeverMoveBackwards applies delivered, then a late
// "sent", then a redelivered "delivered": the message stays delivered and
// the redelivery is dropped.
func TestStatusCallbacksNeverMoveBackwards(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.pool.Exec(ctx, `INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, state, provider_id, idempotency_key)
		VALUES ('msg_1', 'demo', 'r', 'confirmation', 'whatsapp', '+4915155555555', 'hi', 'sent', 'SMx', 'k')`)
	require.NoError(t, err)
	state := func() string {
		var s string
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT state FROM outbox_messages WHERE id = 'msg_1'`).Scan(&s))
		return s
	}
	for _, step := range []struct{ status, want string }{{"delivered", "delivered"}, {"sent", "delivered"}, {"delivered", "delivered"}} {
		code, _, err := e.sim.Post(ctx, channels.RouteStatus+"?outbox_id=msg_1", url.Values{"MessageSid": {"SMx"}, "MessageStatus": {step.status}})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, step.want, state())
	}
	require.Equal(t, 2, e.count(t, `SELECT count(*) FROM inbox_events WHERE kind = $1`, channels.RouteStatus))
}
