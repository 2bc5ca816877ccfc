package conversation_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/workflows"
)

// guess is an attacker's way of computing an intent ID for a guessed
// number; both formulas are public, in this repository.
type guess func(tenant, number, service string, slot time.Time) string

// plainGuess is the intent ID as it was, a plain hash of the number.
func plainGuess(tenant, number, service string, slot time.Time) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{tenant, number, service, "", slot.UTC().Format(time.RFC3339)}, "\x00")))
	return hex.EncodeToString(sum[:])[:24]
}

// keyedGuess is the keyed intent ID with the keys of keys.
func keyedGuess(keys *customerid.Keyer) guess {
	return func(tenant, number, service string, slot time.Time) string {
		key, err := keys.Key(tenant, number)
		if err != nil {
			return ""
		}
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte("bookonce intent v2\x00" + strings.Join([]string{tenant, service, "", slot.UTC().Format(time.RFC3339)}, "\x00")))
		return hex.EncodeToString(m.Sum(nil))[:24]
	}
}

// bruteForce tries every number of a German mobile block of 10,000 (the
// true one among them) and returns those whose guessed ID is intentID.
func bruteForce(g guess, intentID, service string, slot time.Time) []string {
	var found []string
	for n := range 10000 {
		number := fmt.Sprintf("+49151123%05d", 40000+n)
		if g("demo", number, service, slot) == intentID {
			found = append(found, number)
		}
	}
	return found
}

// TestAppointmentIDDoesNotRevealTheNumber: the appointment's workflow ID
// is the business reference the calendar and Stripe (booking_reference)
// store and logs and Temporal's visibility show, next to the service and
// the slot. Whoever reads it there must not recover the customer's number
// by hashing the few candidate numbers: neither with the plain hash IDs
// were, nor with the keyed one and the published development secret. The
// holder of the real secret still can, and the same wish from either
// channel still maps to one ID.
func TestAppointmentIDDoesNotRevealTheNumber(t *testing.T) {
	const customer, wish, spoken = "+4915112345678", "Reifenwechsel am Dienstag um 14 Uhr", "Dienstag vierzehn Uhr Reifenwechsel"
	secret := make([]byte, 32)
	_, err := rand.Read(secret)
	require.NoError(t, err)
	keys, err := customerid.New(hex.EncodeToString(secret))
	require.NoError(t, err)
	key, err := keys.Key("demo", customer)
	require.NoError(t, err)

	var ids []string
	for _, sig := range []signal{whatsapp(time.Second, "SMa", wish), inbound(time.Second, workflows.ChannelVoice, "CAa:gather:1", spoken)} {
		f := &convFake{understand: map[string]intent.Result{wish: tireChange, spoken: tireChange}}
		in := unitConversationInput(0)
		in.Customer, in.CustomerKey = customer, key
		runConversation(t, f, in, []signal{sig})
		require.Len(t, f.childIDs, 1)
		ids = append(ids, f.childIDs[0])
	}
	require.Equal(t, ids[0], ids[1], "the same wish from either channel is one appointment")
	intentID, ok := strings.CutPrefix(ids[0], "appointment:demo:")
	require.True(t, ok, ids[0])

	cases := []struct {
		name  string
		guess guess
		found []string
	}{
		{"the plain hash of the number", plainGuess, nil},
		{"the keyed hash with the published development secret", keyedGuess(customerid.Dev()), nil},
		{"the keyed hash with the deployment's secret", keyedGuess(keys), []string{customer}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.found, bruteForce(tc.guess, intentID, "tire-change", unitSlot),
				"numbers whose ID is the appointment's %s", ids[0])
		})
	}
}
