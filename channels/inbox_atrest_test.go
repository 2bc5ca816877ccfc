package channels_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
)

func payloadKeys(t *testing.T, ids ...string) []payloadcrypt.Key {
	t.Helper()
	keys := make([]payloadcrypt.Key, len(ids))
	for i, id := range ids {
		keys[i] = payloadcrypt.Key{ID: id, Secret: make([]byte, payloadcrypt.KeySize)}
		_, err := rand.Read(keys[i].Secret)
		require.NoError(t, err)
	}
	return keys
}

func payloadCodec(t *testing.T, keys ...payloadcrypt.Key) *payloadcrypt.Codec {
	t.Helper()
	c, err := payloadcrypt.New(keys)
	require.NoError(t, err)
	return c
}

// requireRowsWithout: no row the query selects (one text column, say a
// whole row cast to text) holds any of secrets, in clear or hex-encoded.
func (e env) requireRowsWithout(t *testing.T, query string, secrets ...string) {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), query)
	require.NoError(t, err)
	texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, texts, "rows to check")
	for _, row := range texts {
		for _, s := range secrets {
			require.NotContains(t, row, s)
			require.NotContains(t, row, hex.EncodeToString([]byte(s)))
		}
	}
}

// TestSealedInboxEvents: with payload keys a Twilio delivery is stored
// without the number or the text (the customer column masked, the
// payload sealed); the relay still hands it to its conversation after a
// key rotation, whose reply is sealed in the outbox too; a sealed payload
// moved to another row is an error, that row stays pending, and the rows
// behind it are delivered.
func TestSealedInboxEvents(t *testing.T) {
	t.Parallel()
	keys := payloadKeys(t, "A", "B")
	e := newEnv(t, func(c *config.Config) { c.PayloadCodec = payloadCodec(t, keys[0]) })
	ctx := context.Background()
	// Temporal unreachable: the events stay pending in the inbox.
	down, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	require.NoError(t, err)
	broken := *e.gw
	broken.Temporal = down
	srv := httptest.NewServer(broken.Handler())
	defer srv.Close()
	sim := e.sim
	sim.GatewayURL = srv.URL
	customer := newCustomer()
	const text = "Hallo, Haarschnitt bitte"
	for _, sid := range []string{"SMsealed1", "SMsealed2"} {
		status, _, err := sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp(sid, customer, text))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
	}
	e.requireRowsWithout(t, `SELECT i::text FROM inbox_events i WHERE event_id LIKE 'SMsealed%'`, customer, "Haarschnitt")
	require.Equal(t, 2, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id LIKE 'SMsealed%'
		AND customer = $1 AND payload = '{}'::jsonb AND sealed IS NOT NULL`, mask.Phones(customer)))

	// The first row gets the second one's sealed payload: the relay
	// refuses it rather than delivering another row's event, and goes on
	// with the row behind it.
	_, err = e.pool.Exec(ctx, `UPDATE inbox_events SET sealed = (SELECT sealed FROM inbox_events WHERE event_id = 'SMsealed1'),
		received_at = received_at - interval '1 second' WHERE event_id = 'SMsealed2'`)
	require.NoError(t, err)
	e.gw.Sealer = payloadCodec(t, keys[1], keys[0]) // rotated: B current, A still opens
	n, err := e.gw.RelayPending(ctx, -time.Second)
	require.ErrorIs(t, err, payloadcrypt.ErrSealed)
	require.ErrorContains(t, err, "SMsealed2")
	require.Equal(t, 1, n)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = 'SMsealed1' AND state = 'delivered'`))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = 'SMsealed2' AND state = 'pending'`))

	testsupport.Eventually(t, 30*time.Second, "the conversation to answer", func() bool {
		return e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:SMsealed1'`) == 1
	})
	// The reference is the conversation's workflow ID, which still names
	// the number until workflow IDs carry a keyed hash (issue #16).
	e.requireRowsWithout(t, `SELECT concat_ws(',', recipient, body, sealed, last_error) FROM outbox_messages WHERE kind = 'reply:SMsealed1'`, customer)
}
