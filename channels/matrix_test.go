package channels_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
)

// delivery is one webhook as Twilio sends it.
type delivery struct {
	route string
	form  url.Values
}

// postAtOnce posts the deliveries from goroutines released together, so
// they reach the gateway at the same moment, and requires a 200 for each.
func (e env) postAtOnce(t *testing.T, ds ...delivery) {
	t.Helper()
	statuses, errs := make([]int, len(ds)), make([]error, len(ds))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Go(func() {
			<-start
			statuses[i], _, errs[i] = e.sim.Post(context.Background(), d.route, d.form)
		})
	}
	close(start)
	wg.Wait()
	for i := range ds {
		require.NoError(t, errs[i], "delivery %d", i)
		require.Equal(t, http.StatusOK, statuses[i], "delivery %d", i)
	}
}

// requireBookings waits for n confirmed bookings with their confirmations
// and then requires that nothing else reached the downstream systems:
// exactly n reservations, n payment intents (all captured) and n
// confirmation rows in the outbox.
func (e env) requireBookings(t *testing.T, n int) {
	t.Helper()
	testsupport.Eventually(t, 60*time.Second, "the confirmed bookings with their confirmations", func() bool {
		return e.count(t, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed'`) == n &&
			e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation'`) == n
	})
	require.Equal(t, n, e.count(t, `SELECT count(*) FROM calendar_reservations`), "reservations")
	require.Equal(t, n, e.count(t, `SELECT count(*) FROM payment_intents`), "payment intents")
	require.Equal(t, n, e.count(t, `SELECT count(*) FROM payment_intents WHERE status = 'succeeded' AND amount_captured > 0`), "captured deposits")
	require.Equal(t, n, e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation'`), "confirmations")
}

// crashingTemporal is the Temporal client of a gateway process that dies
// at the moment it would hand an event on: the inbox row is committed,
// nothing is signalled, and Twilio never gets an answer
// (http.ErrAbortHandler makes net/http drop the connection).
type crashingTemporal struct{ client.Client }

func (crashingTemporal) SignalWithStartWorkflow(context.Context, string, string, any, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	panic(http.ErrAbortHandler)
}

// TestMatrix04GatewayCrashAfterInboxCommit proves failure-matrix item 4 (a
// consumer commits its database work and crashes before acknowledging): a
// gateway commits the inbox row and dies before SignalWithStart and before
// answering; Twilio redelivers the same webhook to a healthy gateway, which
// drops it as a duplicate; the relay hands the pending event on. One inbox
// row, one duplicate counted; downstream one reservation, one captured
// deposit, one confirmation row, and one reply at the customer (counted at
// the fake Twilio).
func TestMatrix04GatewayCrashAfterInboxCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	dying := *e.gw
	dying.Temporal = crashingTemporal{e.tc}
	srv := httptest.NewServer(dying.Handler())
	defer srv.Close()
	crashed := e.sim
	crashed.GatewayURL = srv.URL
	cfg := testsupport.Config(t)
	fake := stacktest.TwilioRelay(t, cfg, e.pool, stack.Logger(cfg, testLog{t}), 100*time.Millisecond)
	customer, sid := newCustomer(), twilio.NewSID("SM")
	form := twilio.WhatsApp(sid, customer, "Reifenwechsel am "+dateText(nextTuesday(t))+" um 14 Uhr")

	_, _, err := crashed.Post(ctx, channels.RouteWhatsApp, form)
	require.Error(t, err, "the gateway died before answering")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = $1 AND state = 'pending'`, sid),
		"the inbox row was committed before the crash")
	_, err = e.tc.DescribeWorkflowExecution(ctx, testsupport.ConversationID(t, "demo", customer), "")
	var notFound *serviceerror.NotFound
	require.ErrorAs(t, err, &notFound, "nothing was signalled")

	status, twiml, err := e.sim.Post(ctx, channels.RouteWhatsApp, form) // Twilio's redelivery
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, twiml, "<Response></Response>")
	require.Equal(t, 1.0, testutil.ToFloat64(e.gw.Metrics.DuplicatesBlocked().WithLabelValues("inbox", "demo", channels.RouteWhatsApp)),
		"the redelivery counted as a duplicate")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = $1 AND state = 'pending'`, sid),
		"the redelivery is dropped; the pending event waits for the relay")

	n, err := e.gw.RelayPending(ctx, -time.Second)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	e.requireBookings(t, 1)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events`))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE state = 'delivered'`))
	require.Len(t, testsupport.Delivered(t, e.pool, fake, testsupport.ConversationID(t, "demo", customer), customer, "Danke! Wir buchen"), 1,
		"one reply reached the customer")
	n, err = e.gw.RelayPending(ctx, -time.Second)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to relay")
}

// TestMatrix11GenuineSecondBooking proves failure-matrix item 11 (a genuine
// second booking by the same customer is not swallowed): within the dedup
// window the same number books a tire change on one day and then an
// inspection for another car on another day. Two new decisions, no merge,
// no review case; downstream two reservations, two captured deposits, two
// confirmation rows.
func TestMatrix11GenuineSecondBooking(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tuesday, customer := nextTuesday(t), newCustomer()
	status, _, err := e.sim.Post(ctx, channels.RouteWhatsApp,
		twilio.WhatsApp(twilio.NewSID("SM"), customer, "Reifenwechsel am "+dateText(tuesday)+" um 14 Uhr"))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	e.requireBookings(t, 1)

	status, _, err = e.sim.Post(ctx, channels.RouteWhatsApp,
		twilio.WhatsApp(twilio.NewSID("SM"), customer, "Und für unser zweites Auto eine Inspektion am "+dateText(tuesday.AddDate(0, 0, 1))+" um 10 Uhr"))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	e.requireBookings(t, 2)
	require.Equal(t, 2, e.count(t, `SELECT count(*) FROM dedup_decisions WHERE decision = 'new'`))
	require.Zero(t, e.count(t, `SELECT count(*) FROM dedup_decisions WHERE decision <> 'new'`), "no merge, no review")
	require.Zero(t, e.count(t, `SELECT count(*) FROM review_cases`))
	require.Equal(t, 2, e.count(t, `SELECT count(DISTINCT service) FROM booking_intents`))
	require.Equal(t, 2, e.count(t, `SELECT count(DISTINCT reference) FROM calendar_reservations WHERE status = 'confirmed'`))
}
