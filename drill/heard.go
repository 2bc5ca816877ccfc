package drill

// What a drill customer hears: the messages the fake Twilio accepted for
// their number, waited for and matched by their words.

import (
	"context"
	"strings"
	"time"
)

// firstWord returns the first of words that body contains, or "".
func firstWord(body string, words []string) string {
	for _, w := range words {
		if strings.Contains(body, w) {
			return w
		}
	}
	return ""
}

// answerOf names the answers in the report.
var answerOf = map[string]string{cancelledWord: "cancelled", inFlightWords: "cancelling_in_saga", staffWords: "with_staff"}

// await waits up to lateCancelWait for a message to customer at Twilio,
// from the from-th message on and sent after since, that contains one of
// words (in their order of priority within one message), and returns the
// word and the message's index ("" and the count looked at if none came).
func (c *changer) await(ctx context.Context, customer string, since time.Time, from int, words ...string) (string, int) {
	return c.awaitFor(ctx, lateCancelWait, customer, since, from, words...)
}

// awaitFor is await with its own bound.
func (c *changer) awaitFor(ctx context.Context, wait time.Duration, customer string, since time.Time, from int, words ...string) (string, int) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(wait)
	for {
		msgs := c.e.twilio.Messages()
		for i := from; i < len(msgs); i++ {
			m := msgs[i]
			if !strings.HasSuffix(m.To, customer) || m.DateCreated.Before(since.Add(-time.Second)) {
				continue
			}
			if w := firstWord(m.Body, words); w != "" {
				return w, i
			}
		}
		from = len(msgs)
		select {
		case <-ctx.Done():
			return "", from
		case <-deadline:
			return "", from
		case <-tick.C:
		}
	}
}

// heardSince is what the customer got since since (the last few
// messages, shortened): for a report that says why no answer counted.
func (c *changer) heardSince(customer string, since time.Time) []string {
	var out []string
	for _, m := range c.e.twilio.Messages() {
		if strings.HasSuffix(m.To, customer) && !m.DateCreated.Before(since.Add(-time.Second)) {
			out = append(out, shorten(m.Body, 90))
		}
	}
	if len(out) > 3 {
		out = out[len(out)-3:]
	}
	return out
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
