package channels_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/twilio"
)

// Two tenants in one process, configured only by a tenants file: the
// demo workshop (German) and London Garage (English, its own number,
// catalogue, time zone, deposit and confirmation text).
const (
	demoToken    = "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI"
	londonToken  = testsupport.LondonToken
	londonNumber = testsupport.LondonNumber
)

// twoTenants is the whole stack on a database with both tenants: the
// APIs, a worker, the gateway and the outbox sender to a fake Twilio.
type twoTenants struct {
	env
	calendarURL, paymentsURL string
	twilio                   *twilio.FakeServer
}

func newTwoTenants(t *testing.T) twoTenants {
	t.Helper()
	ctx := context.Background()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.TwilioAuthToken = authToken
	// Client-side credentials of the worker: one token per tenant.
	cfg.APITokens = testsupport.TwoTenants(t, pool)
	cal, pay := stacktest.CalendarAPI(t, cfg, pool), stacktest.PaymentsAPI(t, cfg, pool)
	cfg.CalendarURL, cfg.PaymentsURL = cal.URL, pay.URL
	cfg.TaskQueue = testsupport.TaskQueue(t)
	tc := temporaltest.Temporal(t)
	registry := testsupport.Tenants(t, pool)
	testsupport.Worker(t, tc, cfg.TaskQueue, func(r worker.Registry) { stack.Register(r, stack.NewActivities(cfg, pool, registry, tc)) })
	log := stack.Logger(cfg, testLog{t})
	gw, reg := stack.Gateway(cfg, pool, tc, registry, log)
	gw.PublicBaseURL = "https://bookonce.example"
	srv, admin := serveGateway(t, gw)

	fake := twilio.NewFakeServer()
	t.Cleanup(fake.Close)
	sender := stack.OutboxSender(cfg, pool, twilio.New(fake.AccountSID, fake.AuthToken, "+4930123456", twilio.WithBaseURL(fake.URL())), log)
	stack.ForTenants(sender, registry) // each shop from its own number, as the worker does
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = sender.Run(sctx, 100*time.Millisecond) }()
	t.Cleanup(func() { stop(); <-done })

	return twoTenants{
		env: env{pool: pool, tc: tc, reg: reg, gw: gw, url: srv.URL, admin: admin.URL,
			sim: twilio.Simulator{GatewayURL: srv.URL, PublicBaseURL: "https://bookonce.example", AuthToken: authToken, Twilio: fake}},
		calendarURL: cal.URL, paymentsURL: pay.URL, twilio: fake,
	}
}

// toNumber is a WhatsApp message from a customer to number.
func toNumber(number, sid, from, text string) url.Values {
	form := twilio.WhatsApp(sid, from, text)
	form.Set("To", "whatsapp:"+number)
	return form
}

// get calls an API as a tenant's token and returns status and body.
func get(t *testing.T, token, u string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestSecondTenantBooksInItsOwnCalendarDepositAndWording(t *testing.T) {
	t.Parallel()
	e := newTwoTenants(t)
	ctx := context.Background()
	customer := newCustomer()

	status, twiml, err := e.sim.Post(ctx, channels.RouteWhatsApp, toNumber(londonNumber, twilio.NewSID("SM"), customer, "MOT next tuesday at 2pm"))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, twiml, "not configured")

	var ref, holdID, intentID string
	testsupport.Eventually(t, 90*time.Second, "London's booking confirmed", func() bool {
		err := e.pool.QueryRow(ctx, `SELECT reference, id FROM calendar_reservations
			WHERE tenant_id = 'london' AND customer = $1 AND status = 'confirmed'`, customer).Scan(&ref, &holdID)
		return err == nil
	})
	require.Zero(t, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE tenant_id = 'demo'`), "nothing in the demo calendar")
	var amount int64
	var currency string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT id, amount, currency FROM payment_intents
		WHERE tenant_id = 'london' AND booking_reference = $1`, ref).Scan(&intentID, &amount, &currency))
	require.Equal(t, int64(1500), amount, "London's deposit for an MOT")
	require.Equal(t, "gbp", currency)

	var confirmation twilio.FakeMessage
	testsupport.Eventually(t, 30*time.Second, "the confirmation at Twilio", func() bool {
		for _, m := range e.twilio.Messages() {
			if strings.Contains(m.To, customer) && strings.HasPrefix(m.Body, "London Garage: your MOT on ") {
				confirmation = m
				return true
			}
		}
		return false
	})
	require.Contains(t, confirmation.Body, "is booked (booking ")
	for _, m := range e.twilio.Messages() {
		if strings.Contains(m.To, customer) {
			require.Equal(t, "whatsapp:"+londonNumber, m.From, "London's customer hears from London's number: %q", m.Body)
		}
	}
	replies := e.twilio.Messages()
	require.True(t, func() bool {
		for _, m := range replies {
			if strings.Contains(m.To, customer) && strings.HasPrefix(m.Body, "Thank you! We are booking MOT on ") {
				return true
			}
		}
		return false
	}(), "the conversation answered in English with the built-in English text")

	// A review case of London's, for the review API and the ops page.
	londonCase, err := (&review.Store{Pool: e.pool}).Open(ctx, "london-case-"+customer, review.Case{
		Tenant: "london", WorkflowID: "appointment:london:x", Reason: review.ReasonUnknownOutcome})
	require.NoError(t, err)

	cases := []struct {
		name, url string
		// secret is what of London's only London's token may see.
		secret string
		// single: the URL names London's object; others get 404.
		single bool
	}{
		{"calendar reservations", e.calendarURL + "/v1/reservations?status=confirmed", holdID, false},
		{"calendar hold", e.calendarURL + "/v1/holds/" + holdID, holdID, true},
		{"calendar holds by reference", e.calendarURL + "/v1/holds?reference=" + url.QueryEscape(ref), holdID, false},
		{"payment intents", e.paymentsURL + "/v1/payment_intents", intentID, false},
		{"payment intent", e.paymentsURL + "/v1/payment_intents/" + intentID, intentID, true},
		{"payment search", e.paymentsURL + "/v1/payment_intents/search?query=" + url.QueryEscape("metadata['booking_reference']:'"+ref+"'"), intentID, false},
		{"review cases", e.admin + "/v1/review-cases", londonCase.ID, false},
		{"ops page", e.admin + "/ops", londonCase.ID, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := get(t, londonToken, c.url)
			require.Equal(t, http.StatusOK, status, body)
			require.Contains(t, body, c.secret, "London sees its own")
			status, body = get(t, demoToken, c.url)
			if c.single {
				require.Equal(t, http.StatusNotFound, status, "the demo tenant cannot read London's: %s", body)
			} else {
				require.Equal(t, http.StatusOK, status, body)
				require.NotContains(t, body, c.secret, "the demo tenant sees nothing of London's")
			}
			status, _ = get(t, "not-a-token", c.url)
			require.Equal(t, http.StatusUnauthorized, status)
		})
	}
}

func TestUnknownNumberIsAnsweredRecordedAndBooksNothing(t *testing.T) {
	t.Parallel()
	e := newTwoTenants(t)
	ctx := context.Background()
	const unknown = "+15550100999"
	cases := []struct {
		name, route string
		form        url.Values
		want        []string
	}{
		{"whatsapp", channels.RouteWhatsApp, toNumber(unknown, twilio.NewSID("SM"), newCustomer(), "MOT next tuesday at 2pm"),
			[]string{"<Message>", "not configured"}},
		{"voice", channels.RouteVoice, url.Values{"CallSid": {twilio.NewSID("CA")}, "From": {newCustomer()}, "To": {unknown}},
			[]string{`<Say language="en-GB">`, "not configured", "<Hangup/>"}},
		{"spoken wish", channels.RouteVoiceGather + "?step=1", func() url.Values {
			f := twilio.Speech(twilio.NewSID("CA"), newCustomer(), "Reifenwechsel am Dienstag um 14 Uhr")
			f.Set("To", unknown)
			return f
		}(), []string{"not configured", "<Hangup/>"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, twiml, err := e.sim.Post(ctx, c.route, c.form)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			for _, w := range c.want {
				require.Contains(t, twiml, w)
			}
			require.Equal(t, i+1, e.count(t, `SELECT count(*) FROM inbox_events WHERE tenant_id = '-' AND state = 'delivered'
				AND payload->>'unroutable' = $1`, channels.ReasonUnconfiguredNumber), "recorded, never handed on")
		})
	}
	unconfigured := e.gw.Metrics.UnconfiguredNumbers()
	require.Equal(t, 1.0, testutil.ToFloat64(unconfigured.WithLabelValues("whatsapp")))
	require.Equal(t, 2.0, testutil.ToFloat64(unconfigured.WithLabelValues("voice")))
	for _, table := range []string{"booking_intents", "dedup_decisions", "calendar_reservations", "payment_intents", "outbox_messages"} {
		require.Zero(t, e.count(t, `SELECT count(*) FROM `+table), "nothing booked or sent: %s", table)
	}
}
