package channels_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/browser"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/twilio"
)

// linkEnv is the whole stack with payment links: the APIs, a worker, the
// gateway, the outbox sender to a fake Twilio, and the payment API's
// webhook delivery to the gateway's /webhooks/stripe.
type linkEnv struct {
	env
	twilio *twilio.FakeServer
}

func newLinkEnv(t *testing.T) linkEnv {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	// The gateway is configured for the fake's account: the fake signs its
	// status callbacks with that token, knows the shop's approved WhatsApp
	// templates and sees what customers send.
	fake := twilio.NewFakeServer()
	t.Cleanup(fake.Close)
	cfg.TwilioAuthToken = fake.AuthToken
	cfg.DepositMode = config.DepositLink
	cfg.TaskQueue = testsupport.TaskQueue(t)
	tc := temporaltest.Temporal(t)
	registry := testsupport.Tenants(t, pool)
	log := stack.Logger(cfg, testLog{t})

	// The gateway first: the payment API delivers its webhooks to it.
	gwSrv := httptest.NewUnstartedServer(nil)
	gwSrv.Start()
	t.Cleanup(gwSrv.Close)
	cfg.PublicBaseURL = gwSrv.URL
	cfg.StripeWebhookURL, cfg.StripeWebhookSecret = gwSrv.URL+channels.RouteStripe, testWebhookSecret
	cal, pay := stacktest.CalendarAPI(t, cfg, pool), stacktest.PaymentsAPI(t, cfg, pool)
	cfg.CalendarURL, cfg.PaymentsURL = cal.URL, pay.URL
	testsupport.Worker(t, tc, cfg.TaskQueue, func(r worker.Registry) { stack.Register(r, stack.NewActivities(cfg, pool, registry, tc)) })
	gw, reg := stack.Gateway(cfg, pool, tc, registry, log)
	gwSrv.Config.Handler = gw.Handler()

	for _, p := range registry.All() {
		stack.ApproveTemplates(fake, p.Tenant)
	}
	sender := stack.OutboxSender(cfg, pool, twilio.New(fake.AccountSID, fake.AuthToken, "+4930123456", twilio.WithBaseURL(fake.URL())), log)
	stack.ForTenants(sender, registry)
	deliverer := stack.PaymentsWebhooks(cfg, pool, nil, log)
	done := make(chan struct{}, 2)
	go func() { defer func() { done <- struct{}{} }(); _ = sender.Run(ctx, 100*time.Millisecond) }()
	go func() { defer func() { done <- struct{}{} }(); deliverer.Run(ctx, 100*time.Millisecond) }()
	t.Cleanup(func() { stop(); <-done; <-done })

	return linkEnv{
		env: env{pool: pool, tc: tc, reg: reg, gw: gw, url: gwSrv.URL,
			sim: twilio.Simulator{GatewayURL: gwSrv.URL, PublicBaseURL: gwSrv.URL, AuthToken: fake.AuthToken, Twilio: fake}},
		twilio: fake,
	}
}

// sentTo counts the messages at Twilio to customer that contain text.
func (e linkEnv) sentTo(customer, text string) int {
	n := 0
	for _, m := range e.twilio.Messages() {
		if strings.Contains(m.To, customer) && strings.Contains(m.Body, text) {
			n++
		}
	}
	return n
}

// TestPaymentLinkPaidInTheBrowserConfirmsOnce is the customer's whole
// path: a WhatsApp wish, the link by WhatsApp, the hosted page in
// headless Chromium, Pay; the booking is confirmed, the deposit captured
// once and the confirmation sent once.
func TestPaymentLinkPaidInTheBrowserConfirmsOnce(t *testing.T) {
	t.Parallel()
	if browser.Find() == "" {
		t.Skip(browser.ErrNoChromium.Error() + " to run the browser test")
	}
	e := newLinkEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	customer := newCustomer()
	day := nextTuesday(t)
	wish := fmt.Sprintf("Reifenwechsel am %s um 10 Uhr", dateText(day))
	status, _, err := e.sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp(twilio.NewSID("SM"), customer, wish))
	require.NoError(t, err)
	require.Equal(t, 200, status)

	link := testsupport.PaymentLink(t, e.twilio, customer)
	bctx, closeBrowser, err := browser.New(ctx, t.TempDir())
	require.NoError(t, err)
	defer closeBrowser()
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`input[value="pm_card_visa"]`)),
		chromedp.Click(chromedp.CSS(`input[value="pm_card_visa"]`)),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[role="status"]`)),
	), "open the link, choose Visa and pay")
	done, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`[role="status"]`)))
	require.NoError(t, err)
	require.Contains(t, done, "Zahlung ist eingegangen")
	if dir := os.Getenv("BOOKONCE_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(90))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dir+"/payment-page.png", png, 0o644))
	}

	var ref string
	testsupport.Eventually(t, 60*time.Second, "the booking confirmed in the calendar", func() bool {
		return e.pool.QueryRow(ctx, `SELECT reference FROM calendar_reservations
			WHERE customer = $1 AND status = 'confirmed'`, customer).Scan(&ref) == nil
	})
	testsupport.Eventually(t, 60*time.Second, "the deposit captured and the confirmation sent", func() bool {
		var captured int
		err := e.pool.QueryRow(ctx, `SELECT count(*) FROM payment_intents WHERE booking_reference = $1
			AND status = 'succeeded' AND amount_captured = amount`, ref).Scan(&captured)
		return err == nil && captured == 1 && e.sentTo(customer, "Ihr Termin ist bestätigt") >= 1
	})
	var intents, charges int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*), count(charge_id) FROM payment_intents
		WHERE booking_reference = $1`, ref).Scan(&intents, &charges))
	require.Equal(t, 1, intents, "one payment intent for the booking")
	require.Equal(t, 1, charges, "one charge")
	require.Equal(t, 1, e.sentTo(customer, "Ihr Termin ist bestätigt"), "one confirmation at Twilio")
	require.Equal(t, 1, e.sentTo(customer, "/pay/"), "one payment link at Twilio")
}
