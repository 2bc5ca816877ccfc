package twilio_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/twilio"
)

// TestFakeRefusesSMSToWhoTextedStop: as Twilio's opt-out handling does, a
// customer who texted STOP to the shop's number gets no SMS from it (400,
// error 21610, which the client classifies as final: sending again fails
// the same way) until they text START; only a message that is the keyword
// alone counts, any case; WhatsApp and other senders are not affected.
// Twilio answers each keyword itself, as carriers require.
func TestFakeRefusesSMSToWhoTextedStop(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	const shop, other, customer = "+4930123456", "+4930999999", "+4915112345678"
	send := func(from, to string) error {
		_, err := twilio.New(f.AccountSID, f.AuthToken, from, twilio.WithBaseURL(f.URL())).Send(context.Background(), "", to, "Erinnerung", "")
		return err
	}
	steps := []struct {
		name     string
		inbound  string // what the customer texts the shop first ("" for nothing)
		from, to string
		refused  bool
	}{
		{"before anything", "", shop, customer, false},
		{"a sentence with stop in it", "stop please, I moved", shop, customer, false},
		{"STOP", "  stop ", shop, customer, true},
		{"WhatsApp to the same customer", "", shop, "whatsapp:" + customer, false},
		{"another sender", "", other, customer, false},
		{"still refused", "", shop, customer, true},
		{"START", "Start", shop, customer, false},
		{"UNSUBSCRIBE", "UNSUBSCRIBE", shop, customer, true},
		{"UNSTOP", "unstop", shop, customer, false},
	}
	for _, s := range steps {
		if s.inbound != "" {
			f.Inbound(customer, shop, s.inbound)
		}
		err := send(s.from, s.to)
		if !s.refused {
			require.NoError(t, err, s.name)
			continue
		}
		var te *twilio.Error
		require.True(t, errors.As(err, &te), "%s: %v", s.name, err)
		require.Equal(t, twilio.ErrCodeUnsubscribed, te.Code, s.name)
		require.True(t, te.Final(), "%s: refused for good, not retried", s.name)
	}
	var ours, answers int
	for _, m := range f.Messages() {
		if m.Body == "Erinnerung" {
			ours++
		} else {
			require.Equal(t, customer, m.To, "Twilio answers the keyword")
			require.Equal(t, shop, m.From, "from the number it was texted to")
			answers++
		}
	}
	require.Equal(t, 6, ours, "the refused sends committed nothing")
	require.Equal(t, 4, answers, "Twilio answered STOP, START, UNSUBSCRIBE and UNSTOP")
}
