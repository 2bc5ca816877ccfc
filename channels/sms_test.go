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
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
)

// TestSMSKeywordsTwilioHandlesAreRecordedNotAnswered: on SMS, Twilio
// itself opts a customer out (STOP, CANCEL, …) or back in (START, …) and
// answers them; bookonce records the change in the consent trail, once
// per message however often it is redelivered, and sends nothing of its
// own (an answer to a STOP would be refused with 21610). HELP changes
// nothing; a Messaging Service's own word arrives with its OptOutType.
func TestSMSKeywordsTwilioHandlesAreRecordedNotAnswered(t *testing.T) {
	t.Parallel()
	e := newLinkEnv(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		texts  []string
		extra  url.Values
		trail  []string
		optout bool // Twilio refuses the shop's SMS afterwards
	}{
		{"STOP", []string{"STOP"}, nil, []string{"opt_out"}, true},
		{"CANCEL is Twilio's opt-out on SMS", []string{" cancel "}, nil, []string{"opt_out"}, true},
		{"STOP then START", []string{"STOP", "Start"}, nil, []string{"opt_out", "opt_in"}, false},
		{"HELP", []string{"HELP"}, nil, nil, false},
		{"the service's own word", []string{"STOPP"}, url.Values{"OptOutType": {"STOP"}}, []string{"opt_out"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			customer := newCustomer()
			for _, text := range tc.texts {
				form := twilio.SMS(twilio.NewSID("SM"), customer, text)
				for k, v := range tc.extra {
					form[k] = v
				}
				for range 2 { // and Twilio's redelivery
					code, body, err := e.sim.Post(ctx, channels.RouteSMS, form)
					require.NoError(t, err)
					require.Equal(t, http.StatusOK, code)
					require.Equal(t, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response></Response>", body, "Twilio has answered")
				}
			}
			key, err := customerid.Dev().Key("demo", customer)
			require.NoError(t, err)
			var trail []string
			rows, err := e.pool.Query(ctx, `SELECT action || '/' || channel FROM consent_events WHERE tenant_id = 'demo' AND customer_key = $1 ORDER BY id`, string(key))
			require.NoError(t, err)
			for rows.Next() {
				var a string
				require.NoError(t, rows.Scan(&a))
				trail = append(trail, strings.TrimSuffix(a, "/sms"))
			}
			require.NoError(t, rows.Err())
			require.Equal(t, tc.trail, trail)

			_, err = twilio.New(e.twilio.AccountSID, e.twilio.AuthToken, twilio.SimulatedShop, twilio.WithBaseURL(e.twilio.URL())).
				Send(ctx, "", customer, "Erinnerung", "")
			if tc.optout {
				require.ErrorContains(t, err, "21610", "Twilio refuses the shop's SMS")
			} else {
				require.NoError(t, err)
			}
			var ours int
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM outbox_messages WHERE recipient = $1`, customer).Scan(&ours))
			require.Zero(t, ours, "bookonce answered nothing")
			var answers int
			for _, m := range e.twilio.Messages() {
				if m.To == customer && m.From == twilio.SimulatedShop && m.Body != "Erinnerung" {
					answers++
				}
			}
			want := 0
			for _, text := range tc.texts {
				if twilio.Keyword(text) != "" { // the fake knows Twilio's own words, not a service's
					want++
				}
			}
			require.Equal(t, want, answers, "Twilio answered each keyword once, redelivered or not")
		})
	}
}

// TestSMSWishIsBookedAndAnsweredBySMS: a customer who texts the shop's
// number is a conversation like any other, answered on the channel they
// wrote on: the link by SMS, paid, the confirmation by SMS, nothing by
// WhatsApp.
func TestSMSWishIsBookedAndAnsweredBySMS(t *testing.T) {
	t.Parallel()
	e := newLinkEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	customer := newCustomer()
	wish := fmt.Sprintf("Ölwechsel am %s um 12 Uhr", dateText(nextTuesday(t)))
	code, _, err := e.sim.Post(ctx, channels.RouteSMS, twilio.SMS(twilio.NewSID("SM"), customer, wish))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)

	testsupport.PayLink(ctx, t, testsupport.PaymentLink(t, e.twilio, customer))

	testsupport.Eventually(t, 60*time.Second, "the confirmation", func() bool {
		return e.sentTo(customer, "Ihr Termin ist bestätigt") == 1
	})
	for _, m := range e.twilio.Messages() {
		if strings.Contains(m.To, customer) {
			require.Equal(t, customer, m.To, "by SMS, not WhatsApp: %s", m.Body)
			require.Equal(t, twilio.SimulatedShop, m.From)
		}
	}
	var confirmed int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer).Scan(&confirmed))
	require.Equal(t, 1, confirmed)
}
