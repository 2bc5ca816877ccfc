package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
)

// TestMakeRunBooksARelayCallThroughAReconnect is issue #32's call on the
// stack exactly as make run wires it (run, with make run's defaults but
// for free loopback ports, a fresh database and a temp data directory):
// a caller on ConversationRelay says their wish, the socket drops before
// any answer and Twilio reconnects, replaying the sentence. The caller
// hears "one moment", then, since make run takes deposits by payment
// link and nobody has paid yet, that the confirmation follows by SMS.
// The customer gets the wish acknowledged in writing and one payment
// link, pays it on the hosted page and gets one confirmation: one turn,
// one booking, one captured deposit, three messages.
func TestMakeRunBooksARelayCallThroughAReconnect(t *testing.T) {
	pool, dbURL := testsupport.DatabaseURL(t)
	cfg := makeRunConfig(t, dbURL)
	require.Equal(t, config.DepositLink, cfg.DepositMode, "make run's default")
	fake := startMakeRun(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	sim := twilio.Simulator{GatewayURL: "http://" + cfg.GatewayListen, PublicBaseURL: cfg.PublicBaseURL, AuthToken: cfg.TwilioAuthToken}
	c, _, err := sim.CallRelay(ctx, channels.RouteVoiceRelay, fmt.Sprintf("+49151%08d", rand.IntN(100000000)))
	require.NoError(t, err)
	require.NoError(t, c.Connect(ctx))
	day := testsupport.Slot(t, time.Tuesday, 15)
	outcome := testsupport.SayAcrossAReconnect(ctx, t, c, fmt.Sprintf("Reifenwechsel am %d.%d. um 15 Uhr", day.Day(), int(day.Month())))
	require.Contains(t, outcome, "schicken wir Ihnen einen Link für die Anzahlung von 20,00 €", "the deposit is not paid yet: the caller hears to pay it")
	require.Contains(t, outcome, "Sobald sie bezahlt ist, ist Ihr Termin bestätigt.")
	c.Hangup()

	testsupport.PayLink(ctx, t, testsupport.PaymentLink(t, fake, c.From))
	testsupport.Eventually(t, time.Minute, "the confirmation at Twilio and the deposit captured", func() bool {
		var captured int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM payment_intents p JOIN calendar_reservations r
			ON r.tenant_id = p.tenant_id AND r.reference = p.booking_reference
			WHERE r.customer = $1 AND p.status = 'succeeded' AND p.amount_captured = p.amount`, c.From).Scan(&captured)
		require.NoError(t, err)
		return captured == 1 && len(testsupport.Accepted(fake, c.From, "Ihr Termin ist bestätigt")) == 1
	})

	var turns int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM inbox_events WHERE event_id LIKE $1`, c.CallSid+":relay:%").Scan(&turns))
	require.Equal(t, 1, turns, "the replayed sentence is the same turn")
	effects := testsupport.CountEffects(t, pool, fake, config.DefaultTenant, c.From, day)
	require.Equal(t, map[string]int{"confirmed": 1}, effects.Reservations, "one booking at the slot")
	require.Equal(t, map[string]int{"succeeded": 1}, effects.Intents, "one deposit")
	require.Len(t, testsupport.Accepted(fake, c.From, "die Bestätigung folgt"), 1, "one written acknowledgement of the wish")
	require.Len(t, testsupport.Accepted(fake, c.From, "/pay/"), 1, "one payment link")
	require.Len(t, testsupport.Accepted(fake, c.From, "Ihr Termin ist bestätigt"), 1, "one confirmation")
	require.Equal(t, 3, effects.Messages, "nothing else")
}

// makeRunConfig is make run's configuration (config.Load with nothing
// set) but for what two stacks on one machine cannot share: every
// listener on a free loopback port, the URLs that name them, the data
// directory, and the database.
func makeRunConfig(t *testing.T, dbURL string) config.Config {
	t.Helper()
	addrs := freeAddrs(t, 10)
	env := map[string]string{
		"DATABASE_URL":          dbURL,
		"BOOKONCE_DATA_DIR":     t.TempDir(),
		"GATEWAY_LISTEN":        addrs[0],
		"CALENDAR_LISTEN":       addrs[1],
		"PAYMENTS_LISTEN":       addrs[2],
		"ADMIN_LISTEN":          addrs[3],
		"AGENT_LISTEN":          addrs[4],
		"WORKER_LISTEN":         addrs[5],
		"PAYMENTS_ADMIN_LISTEN": addrs[6],
		"CALENDAR_ADMIN_LISTEN": addrs[7],
		"CALENDAR_URL":          "http://" + addrs[1],
		"PAYMENTS_URL":          "http://" + addrs[2],
		"PUBLIC_BASE_URL":       "http://" + addrs[0],
		"TEMPORAL_UI_PORT":      addrs[8][strings.LastIndex(addrs[8], ":")+1:],
	}
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	require.NoError(t, err)
	require.NoError(t, cfg.CheckSecrets(config.AllSecrets...), "what serve checks")
	// Set in the configuration, not as TEMPORAL_ADDRESS, which would name
	// a cluster of one's own and start no embedded server.
	cfg.TemporalAddress = addrs[9]
	return cfg
}

// freeAddrs are n loopback addresses nothing listens on, held open
// together so that they differ, drawn where the embedded Temporal
// server's own ports are not (devserver.ListenFree).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	for range n {
		l, err := devserver.ListenFree("127.0.0.1")
		require.NoError(t, err)
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out
}

// startMakeRun runs the stack on cfg until the test ends, when it must
// stop cleanly (run returns nil), and returns the dev fake of Twilio once
// everything serves.
func startMakeRun(t *testing.T, cfg config.Config) *twilio.FakeServer {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan running, 1)
	done := make(chan error, 1)
	out := testsupport.LogWriter(t)
	go func() { done <- run(ctx, cfg, stack.Logger(cfg, out), out, func(r running) { ready <- r }) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			require.NoError(t, err, "run stops cleanly when its context ends")
		case <-time.After(time.Minute):
			t.Error("the stack did not stop within a minute of its context ending")
		}
	})
	select {
	case r := <-ready:
		require.NotNil(t, r.twilio, "make run's messages go to the dev fake of Twilio")
		return r.twilio
	case err := <-done:
		t.Fatalf("the stack did not start: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("the stack did not start within three minutes")
	}
	return nil
}
