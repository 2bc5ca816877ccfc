package channels_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
)

// relayCall answers a call at the relay route, as Twilio asks for it,
// and returns the call Twilio then runs on the socket the TwiML names.
func relayCall(t *testing.T, e cancelEnv) *twilio.RelayCall {
	t.Helper()
	sim := twilio.Simulator{GatewayURL: e.url, PublicBaseURL: e.gw.PublicBaseURL, AuthToken: e.gw.TwilioAuthToken}
	c, relay, err := sim.CallRelay(context.Background(), channels.RouteVoiceRelay, newCustomer())
	require.NoError(t, err)
	require.Equal(t, "de-DE", relay.Language)
	require.Equal(t, "any", relay.Interruptible)
	require.NotEmpty(t, relay.Greeting)
	signed, err := url.Parse(relay.URL)
	require.NoError(t, err)
	require.Equal(t, channels.RouteVoiceRelaySocket, signed.Path)
	return c
}

// TestRelayCallBooksByVoiceThroughAReconnect: a caller on ConversationRelay
// says their wish; the socket drops before any answer, Twilio reconnects
// and replays the sentence. The caller hears "one moment" and then the
// confirmation on the new socket, and the sentence is one turn: one inbox
// row, one booking, one written confirmation at Twilio.
func TestRelayCallBooksByVoiceThroughAReconnect(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	e.gw.VoiceConfirmWait = 10 * time.Minute // the booking's speed must not end the wait here
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := relayCall(t, e)
	require.NoError(t, c.Connect(ctx))
	day := nextTuesday(t)
	outcome := testsupport.SayAcrossAReconnect(ctx, t, c, "Reifenwechsel am "+dateText(day)+" um 15 Uhr")
	require.Contains(t, outcome, "Ihr Termin ist bestätigt: Reifenwechsel am Dienstag, "+dateText(day)+" um 15:00 Uhr.")
	c.Hangup()

	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id LIKE $1`, c.CallSid+":relay:%"), "one turn")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, c.From), "one booking")
	testsupport.Eventually(t, 60*time.Second, "the written confirmation sent", func() bool {
		return sentTo(e.twilio, c.From, "Ihr Termin ist bestätigt") == 1
	})
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM outbox_messages WHERE recipient = $1 AND kind = 'confirmation'`, c.From))
}

// TestRelayNextSentenceIsTheNextTurn: a sentence other than the last one
// is a new turn; the same sentence again right after is the same turn.
func TestRelayNextSentenceIsTheNextTurn(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	e.gw.VoiceConfirmWait = time.Millisecond // answer at once: the confirmation follows
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := relayCall(t, e)
	require.NoError(t, c.Connect(ctx))
	for _, text := range []string{"Hallo", "Hallo", "Was kostet ein Ölwechsel?"} {
		require.NoError(t, c.Say(ctx, text))
		said, err := c.Next(ctx)
		require.NoError(t, err)
		require.Contains(t, said, "Einen Moment")
		_, err = c.Next(ctx)
		require.NoError(t, err)
	}
	c.Hangup()
	require.Equal(t, 2, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id LIKE $1`, c.CallSid+":relay:%"))
}

// TestRelayHandshakeNotSignedByTwilioIsRefused: a socket opened without
// Twilio's signature of the socket URL, or with another token's, gets 403
// and no session.
func TestRelayHandshakeNotSignedByTwilioIsRefused(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, token := range []string{"", "another-token"} {
		c := relayCall(t, e)
		c.AuthToken = token
		if token == "" {
			c.Signed = "ws://elsewhere.example" + channels.RouteVoiceRelaySocket
		}
		err := c.Connect(ctx)
		require.Error(t, err)
		require.Contains(t, err.Error(), "403")
	}
}

// TestRelayInterruptedCallerIsBookedOnceInWriting: the caller talks over
// "one moment" and hangs up; the booking goes on server-side and is
// confirmed once, by message.
func TestRelayInterruptedCallerIsBookedOnceInWriting(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	e.gw.VoiceConfirmWait = 10 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := relayCall(t, e)
	require.NoError(t, c.Connect(ctx))
	require.NoError(t, c.Say(ctx, "Ölwechsel am "+dateText(nextTuesday(t))+" um 16 Uhr"))
	said, err := c.Next(ctx)
	require.NoError(t, err)
	require.Contains(t, said, "Einen Moment")
	require.NoError(t, c.Interrupt(ctx))
	c.Hangup()
	testsupport.Eventually(t, 60*time.Second, "the written confirmation sent", func() bool {
		return sentTo(e.twilio, c.From, "Ihr Termin ist bestätigt") == 1
	})
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, c.From), "one booking")
}
