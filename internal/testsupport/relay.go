package testsupport

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/twilio"
)

// SayAcrossAReconnect is a ConversationRelay turn through a network
// failure: the caller says text on c (connected), the socket drops before any answer,
// and Twilio reconnects, replaying the sentence. The caller must hear the
// demo tenant's "one moment" first; SayAcrossAReconnect returns what they
// hear next (the outcome).
func SayAcrossAReconnect(ctx context.Context, t testing.TB, c *twilio.RelayCall, text string) string {
	t.Helper()
	require.NoError(t, c.Say(ctx, text))
	c.Drop()
	require.NoError(t, c.Connect(ctx), "the reconnect replays the sentence")
	first, err := c.Next(ctx)
	require.NoError(t, err)
	require.Contains(t, first, "Einen Moment")
	outcome, err := c.Next(ctx)
	require.NoError(t, err)
	return outcome
}
