package workflows_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
)

var linkPattern = regexp.MustCompile(`https?://\S+/pay/cs_test_[A-Za-z0-9]+`)

// payByLink is the customer's part of a link-mode booking: read the link
// from the outbox (the message the customer gets), pay it with the page's
// plain form, and relay the webhook as the gateway would.
func payByLink(t *testing.T, ctx context.Context, tc client.Client, pool *pgxpool.Pool, ref string) string {
	t.Helper()
	var body, channel string
	testsupport.Eventually(t, 60*time.Second, "the payment link in the outbox", func() bool {
		err := pool.QueryRow(ctx, `SELECT body, channel FROM outbox_messages WHERE reference = $1 AND kind = 'payment_link'`, ref).Scan(&body, &channel)
		return err == nil
	})
	link := linkPattern.FindString(body)
	require.NotEmpty(t, link, "the message carries the link: %q", body)
	require.Contains(t, body, "20,00 €")
	st, err := appointment.StatusOf(ctx, tc, ref)
	require.NoError(t, err)
	require.Equal(t, link, st.PaymentURL, "the status query shows the link sent")
	require.False(t, st.PaymentExpiresAt.IsZero())

	res, err := http.PostForm(link, url.Values{"payment_method": {"pm_card_visa"}})
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode, "paid on the hosted page")
	require.NoError(t, tc.SignalWorkflow(ctx, deposit.WorkflowID(ref), "", deposit.SignalEvent,
		deposit.Event{EventID: "evt_link_test", Type: deposit.EventCheckoutCompleted, Created: time.Now()}))
	return channel
}

// A booking with a payment link on the real stack: the link reaches the
// outbox, the customer pays on the page, the saga reads the session,
// books and captures once, and confirms once.
func TestPaymentLinkBooking(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := request(t, "+4915112345690", time.Tuesday, 16)
	req.PaymentMethod, req.Channel = "", workflows.ChannelVoice
	r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
	require.NoError(t, err)

	channel := payByLink(t, ctx, e.tc, e.pool, r.GetID())
	require.Equal(t, "whatsapp", channel, "a caller gets the link by WhatsApp")
	st := result(t, r)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, deposit.Captured, st.Payment)

	got := e.effects(t, req.Customer, req.SlotStart)
	want := booked
	want.Messages = 2 // the link and the confirmation
	require.Equal(t, want, got, "one booking, one authorisation captured once")
	require.Equal(t, 1, e.countOf(t, `SELECT count(*) FROM outbox_messages WHERE reference = $1 AND kind = 'confirmation'`, r.GetID()))
	require.Equal(t, 1, e.countOf(t, `SELECT count(*) FROM checkout_sessions WHERE metadata->>'booking_reference' = $1 AND status = 'complete'`, r.GetID()))
}
