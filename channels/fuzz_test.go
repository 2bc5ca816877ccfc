package channels_test

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
)

// fieldLimit bounds each fuzzed field: Twilio's own fields are short, and
// the gateway reads at most 64 KiB of form (beyond that the signature
// cannot be checked, so the delivery is not a signed one).
const fieldLimit = 4 << 10

func clip(s string) string { return s[:min(len(s), fieldLimit)] }

// FuzzSignedWebhook drives the WhatsApp, voice and speech-result webhooks
// with arbitrary, correctly signed form bodies: each is answered 200 with a
// well-formed TwiML document and recorded in the inbox (one new row: every
// iteration carries a fresh delivery ID, or, without one, a fresh field).
// One database and one gateway serve every iteration, so the seeds in
// testdata/fuzz/FuzzSignedWebhook run within a second in make test.
func FuzzSignedWebhook(f *testing.F) {
	e := newEdge(f)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, route uint8, sid, from, text string, step int, key, val string) {
		i := n.Add(1)
		form := url.Values{}
		if key = clip(key); key != "" {
			form.Set(key, clip(val))
		}
		if sid = clip(sid); sid != "" {
			sid = fmt.Sprintf("%s#%d", sid, i) // a new delivery, not a redelivery
		}
		var path string
		switch route % 3 {
		case 0:
			path = channels.RouteWhatsApp
			form.Set("MessageSid", sid)
			form.Set("Body", clip(text))
		case 1:
			path = channels.RouteVoice
			form.Set("CallSid", sid)
		default:
			path = fmt.Sprintf("%s?step=%d", channels.RouteVoiceGather, step)
			form.Set("CallSid", sid)
			form.Set("SpeechResult", clip(text))
		}
		form.Set("From", clip(from))
		form.Set("ApiVersion", fmt.Sprintf("2010-04-01#%d", i)) // makes a delivery without an ID new, too

		before := e.count(t, `SELECT count(*) FROM inbox_events`)
		status, body, err := e.sim.Post(context.Background(), path, form)
		require.NoError(t, err)
		require.Equal(t, 200, status, "answer: %q", body)
		parseTwiML(t, body)
		require.Equal(t, before+1, e.count(t, `SELECT count(*) FROM inbox_events`), "the delivery is recorded")
	})
}
