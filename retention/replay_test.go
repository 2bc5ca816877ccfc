package retention_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/retention"
	"github.com/bookonce/bookonce/twilio"
)

// TestRedeliveryAfterRedactionIsStillADuplicate: a WhatsApp message goes
// through the real gateway into the inbox; once it is older than the
// retention the sweep blanks its sender and text, and Twilio's
// redelivery of the same MessageSid is still dropped at the edge as a
// duplicate (the key is what replay protection needs), without writing
// the number back.
func TestRedeliveryAfterRedactionIsStillADuplicate(t *testing.T) {
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.TwilioAuthToken = "retention-twilio-token"
	cfg.TaskQueue = testsupport.TaskQueue(t) // no worker: the conversation only has to start
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	gw, reg := stack.Gateway(cfg, pool, temporaltest.Temporal(t), testsupport.Tenants(t, pool), log)
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	sim := twilio.Simulator{GatewayURL: srv.URL, PublicBaseURL: cfg.PublicBaseURL, AuthToken: cfg.TwilioAuthToken}
	ctx := context.Background()
	form := twilio.WhatsApp("SMretained", phone, "Reifenwechsel Dienstag 14 Uhr")

	code, _, err := sim.Post(ctx, channels.RouteWhatsApp, form)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, inboxRow{Customer: phone, State: "delivered"}, withoutPayload(readInbox(t, pool, "SMretained")))
	require.Contains(t, readInbox(t, pool, "SMretained").Payload, "Reifenwechsel")

	exec(t, pool, `UPDATE inbox_events SET received_at = $1 WHERE event_id = 'SMretained'`, now.Add(-keep-time.Hour))
	counts, _, err := sweeper(pool, 0).Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, counts[retention.TableInbox])
	require.Equal(t, inboxRow{Payload: "{}", State: "delivered", Redacted: true}, readInbox(t, pool, "SMretained"))

	require.Zero(t, duplicates(t, reg))
	code, _, err = sim.Post(ctx, channels.RouteWhatsApp, form)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, 1.0, duplicates(t, reg), "the redelivery is dropped as a duplicate at the inbox")
	require.Equal(t, inboxRow{Payload: "{}", State: "delivered", Redacted: true}, readInbox(t, pool, "SMretained"),
		"the redelivery writes nothing back")
}

// duplicates is bookonce_duplicates_blocked_total of the inbox's
// WhatsApp route, as the gateway's /metrics shows it.
func duplicates(t *testing.T, reg prometheus.Gatherer) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "bookonce_duplicates_blocked_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["layer"] == "inbox" && labels["route"] == channels.RouteWhatsApp {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func withoutPayload(r inboxRow) inboxRow {
	r.Payload = ""
	return r
}
