package channels_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
)

// TestCallerWithoutWhatsAppGetsTheLinkBySMS: a caller books by phone from
// a number without WhatsApp (a landline). The payment link goes to
// WhatsApp, as the approved template (the caller never wrote there);
// Twilio accepts it and reports 63003 by a signed status callback; the
// gateway records the failure and the relay sends the link once more by
// SMS, once. The caller pays it, the booking is confirmed and the
// confirmation arrives by SMS.
func TestCallerWithoutWhatsAppGetsTheLinkBySMS(t *testing.T) {
	t.Parallel()
	e := newLinkEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	caller := newCustomer()
	e.twilio.NotOnWhatsApp(caller)
	sid := twilio.NewSID("CA")
	wish := fmt.Sprintf("Reifenwechsel am %s um 10 Uhr", dateText(nextTuesday(t)))
	for _, d := range []struct {
		route string
		form  url.Values
	}{
		{channels.RouteVoice, url.Values{"CallSid": {sid}, "AccountSid": {"ACsimulated"}, "From": {caller}, "To": {"+4930123456"}}},
		{channels.RouteVoiceGather + "?step=1", twilio.Speech(sid, caller, wish)},
	} {
		status, _, err := e.sim.Post(ctx, d.route, d.form)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
	}

	var link string
	testsupport.Eventually(t, 60*time.Second, "the payment link by SMS", func() bool {
		for _, m := range e.twilio.Messages() {
			if m.To == caller && strings.Contains(m.Body, "/pay/") {
				link = testsupport.PayURL.FindString(m.Body)
				return true
			}
		}
		return false
	})
	var byWhatsApp []twilio.FakeMessage
	for _, m := range e.twilio.Messages() {
		if m.To == "whatsapp:"+caller {
			byWhatsApp = append(byWhatsApp, m)
		}
	}
	require.Len(t, byWhatsApp, 1, "the link went to WhatsApp first")
	require.NotEmpty(t, byWhatsApp[0].ContentSid, "as the approved template: the caller never wrote on WhatsApp")
	require.Equal(t, twilio.ErrCodeNotOnWhatsApp, byWhatsApp[0].ErrorCode)

	testsupport.PayLink(ctx, t, link) // the caller pays the link from the SMS

	testsupport.Eventually(t, 60*time.Second, "the confirmation by SMS", func() bool {
		return e.sentTo(caller, "Ihr Termin ist bestätigt") == 1
	})
	bySMS := 0
	for _, m := range e.twilio.Messages() {
		if m.To == caller && strings.Contains(m.Body, "/pay/") {
			bySMS++
		}
	}
	require.Equal(t, 1, bySMS, "one link by SMS")
	var confirmed int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, caller).Scan(&confirmed))
	require.Equal(t, 1, confirmed)
}
