package channels_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
)

// call is one caller's call at the gateway, signed as Twilio signs it.
type call struct {
	sim      twilio.Simulator
	sid      string
	customer string
}

func newCall(sim twilio.Simulator) call {
	return call{sim: sim, sid: twilio.NewSID("CA"), customer: newCustomer()}
}

// post posts the call's form to route (with query) and parses the answer.
func (c call) post(t *testing.T, route string, form url.Values) twiml {
	t.Helper()
	status, body, err := c.sim.Post(context.Background(), route, form)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, body)
	return parseTwiML(t, body)
}

// say answers the call and says text at step 1; it returns the answer.
func (c call) say(t *testing.T, text string) twiml {
	t.Helper()
	c.post(t, channels.RouteVoice, url.Values{"CallSid": {c.sid}, "From": {c.customer}, "To": {"+4930123456"}})
	return c.post(t, channels.RouteVoiceGather+"?step=1", twilio.Speech(c.sid, c.customer, text))
}

// follow posts the redirect of an answer, as Twilio does after the pause.
func (c call) follow(t *testing.T, tw twiml) twiml {
	t.Helper()
	require.NotNil(t, tw.Redirect, "a redirect to follow")
	require.Equal(t, http.MethodPost, tw.Redirect.Method)
	return c.post(t, tw.Redirect.URL, twilio.Speech(c.sid, c.customer, ""))
}

// sentTo counts the messages at the fake Twilio to customer containing text.
func sentTo(fake *twilio.FakeServer, customer, text string) int {
	n := 0
	for _, m := range fake.Messages() {
		if strings.Contains(m.To, customer) && strings.Contains(m.Body, text) {
			n++
		}
	}
	return n
}

// TestVoiceBookingConfirmedWithinTheCall: a caller's wish is answered at
// once with "one moment" and a signed poll; once the booking is
// confirmed, the poll says the confirmation (service, time, deposit) in
// the call, and the written confirmation exists exactly once at Twilio,
// however often the poll is repeated.
func TestVoiceBookingConfirmedWithinTheCall(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	e.gw.VoiceConfirmWait = 10 * time.Minute // the booking's speed must not end the wait here
	c := newCall(twilio.Simulator{GatewayURL: e.url, PublicBaseURL: e.gw.PublicBaseURL, AuthToken: e.gw.TwilioAuthToken})
	day := nextTuesday(t)

	wish := "Reifenwechsel am " + dateText(day) + " um 14 Uhr"
	first := c.say(t, wish)
	require.Contains(t, first.spoken(), "Einen Moment")
	require.Len(t, first.Pause, 1)
	require.Equal(t, channels.StatusURL(1, 1), first.Redirect.URL)
	// Twilio repeating the gather (its answer was late) hears the same
	// wait, and the sentence stays one inbox row.
	require.Equal(t, first, c.post(t, channels.RouteVoiceGather+"?step=1", twilio.Speech(c.sid, c.customer, wish)))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM inbox_events WHERE event_id = $1`, c.sid+":gather:1"))

	// A first poll, whatever it finds; then the written confirmation at
	// Twilio (the effect), then the poll Twilio makes next.
	next := c.follow(t, first)
	testsupport.Eventually(t, 90*time.Second, "the confirmation sent to the caller", func() bool {
		return sentTo(e.twilio, c.customer, "Ihr Termin ist bestätigt") == 1
	})
	if next.Redirect != nil {
		require.Empty(t, next.Say, "a later poll only waits")
		next = c.follow(t, next)
	}
	p, ok := e.gw.Tenants.Get("demo")
	require.True(t, ok)
	deposit, _ := p.Deposit("tire-change")
	spoken := next.spoken()
	require.Contains(t, spoken, "Ihr Termin ist bestätigt: Reifenwechsel am Dienstag, "+dateText(day)+" um 14:00 Uhr.")
	require.Contains(t, spoken, deposit.Format(tenants.German))
	require.Nil(t, next.Redirect, "the wait is over")
	next.gathersStep(t, 2)

	// Twilio repeating the poll says it again and sends nothing.
	again := c.post(t, channels.StatusURL(1, 2), twilio.Speech(c.sid, c.customer, ""))
	require.Equal(t, spoken, again.spoken())
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM outbox_messages WHERE recipient = $1 AND kind = 'confirmation'`, c.customer))
	require.Equal(t, 1, sentTo(e.twilio, c.customer, "Ihr Termin ist bestätigt"), "one written confirmation at Twilio")
	require.Equal(t, 2.0, testutil.ToFloat64(e.gw.Metrics.VoiceOutcomes().WithLabelValues(channels.VoiceOutcomeConfirmed)))
}

// TestVoiceBookingWaitingForItsDepositTellsTheCallerToPay: a booking
// whose deposit waits for the payment link cannot confirm during the
// call; once the link is on its way the caller hears that it is coming,
// for how much, and that paying it confirms (not only that a
// confirmation follows, which would wait for them to pay unasked), and
// nothing is confirmed or sent beyond the link.
func TestVoiceBookingWaitingForItsDepositTellsTheCallerToPay(t *testing.T) {
	t.Parallel()
	e := newLinkEnv(t)
	e.gw.VoiceConfirmWait = time.Millisecond // one poll
	c := newCall(e.sim)

	day := nextTuesday(t)
	first := c.say(t, "Reifenwechsel am "+dateText(day)+" um 10 Uhr")
	testsupport.PaymentLink(t, e.twilio, c.customer) // the booking runs and waits for the deposit
	last := c.follow(t, first)
	require.Nil(t, last.Redirect, "one poll allowed: no further wait")
	p, ok := e.gw.Tenants.Get("demo")
	require.True(t, ok)
	deposit, _ := p.Deposit("tire-change")
	require.Contains(t, last.spoken(), "Für Reifenwechsel am Dienstag, "+dateText(day)+" um 10:00 Uhr schicken wir Ihnen einen Link für die Anzahlung von "+
		deposit.Format(tenants.German)+" per WhatsApp oder SMS. Sobald sie bezahlt ist, ist Ihr Termin bestätigt.")
	last.gathersStep(t, 2)
	require.Zero(t, e.sentTo(c.customer, "Ihr Termin ist bestätigt"))
	require.Zero(t, e.count(t, `SELECT count(*) FROM outbox_messages WHERE recipient = $1 AND kind = 'confirmation'`, c.customer))
	require.Equal(t, 1.0, testutil.ToFloat64(e.gw.Metrics.VoiceOutcomes().WithLabelValues(channels.VoiceOutcomePaymentLink)))
}

// TestVoiceStatusRefusesForgedPolls: a poll without Twilio's signature,
// with another token's, or with a poll number other than the one signed
// (a forged counter) is refused before anything is read.
func TestVoiceStatusRefusesForgedPolls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	form := twilio.Speech(twilio.NewSID("CA"), newCustomer(), "")
	signedURL := "https://bookonce.example" + channels.StatusURL(1, 1)
	cases := map[string]struct {
		target string
		sign   string
	}{
		"no signature":           {channels.StatusURL(1, 1), ""},
		"wrong token":            {channels.StatusURL(1, 1), twilio.Sign("other", signedURL, form)},
		"poll number changed":    {channels.StatusURL(1, 2), twilio.Sign(authToken, signedURL, form)},
		"step changed":           {channels.StatusURL(2, 1), twilio.Sign(authToken, signedURL, form)},
		"signed for another URL": {channels.StatusURL(1, 1), twilio.Sign(authToken, e.url+channels.StatusURL(1, 1), form)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.url+tc.target, strings.NewReader(form.Encode()))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.sign != "" {
				req.Header.Set("X-Twilio-Signature", tc.sign)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
		})
	}
	require.Zero(t, testutil.CollectAndCount(e.gw.Metrics.VoiceOutcomes()), "nothing was told")
}

// TestVoiceStatusEndsTheWaitOnOddPolls: signed polls beyond the wait's
// bound, or without what a poll needs, end the wait with valid TwiML and
// no further redirect, so no loop outlives its bound.
func TestVoiceStatusEndsTheWaitOnOddPolls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gw.VoiceConfirmWait = 3 * time.Second // three polls
	cases := []struct {
		name, target string
		form         func(c call) url.Values
		want         string
	}{
		{"poll beyond the bound", channels.StatusURL(1, 4), func(c call) url.Values { return twilio.Speech(c.sid, c.customer, "") },
			"Sie erhalten die Bestätigung per SMS"},
		{"far beyond the bound", channels.StatusURL(1, 1_000_000), func(c call) url.Values { return twilio.Speech(c.sid, c.customer, "") },
			"Sie erhalten die Bestätigung per SMS"},
		{"poll number not a number", channels.RouteVoiceStatus + "?step=1&n=x", func(c call) url.Values { return twilio.Speech(c.sid, c.customer, "") },
			"Leider konnten wir Ihren Anruf nicht zuordnen"},
		{"no step", channels.RouteVoiceStatus + "?n=1", func(c call) url.Values { return twilio.Speech(c.sid, c.customer, "") },
			"Leider konnten wir Ihren Anruf nicht zuordnen"},
		{"no CallSid", channels.StatusURL(1, 1), func(c call) url.Values { return twilio.Speech("", c.customer, "") },
			"Leider konnten wir Ihren Anruf nicht zuordnen"},
		{"caller withheld", channels.StatusURL(1, 1), func(c call) url.Values { return twilio.Speech(c.sid, "anonymous", "") },
			"Leider können wir Ihre Rufnummer nicht erkennen"},
		{"number no tenant owns", channels.StatusURL(1, 1), func(c call) url.Values {
			f := twilio.Speech(c.sid, c.customer, "")
			f.Set("To", "+4930999999")
			return f
		}, "This number is not configured"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCall(e.sim)
			tw := c.post(t, tc.target, tc.form(c))
			require.Nil(t, tw.Redirect, "the wait ends")
			require.Contains(t, tw.spoken(), tc.want)
		})
	}
	// Within the bound and with nothing decided yet, the poll waits on.
	c := newCall(e.sim)
	tw := c.post(t, channels.StatusURL(1, 2), twilio.Speech(c.sid, c.customer, ""))
	require.Equal(t, channels.StatusURL(1, 3), tw.Redirect.URL)
	require.Empty(t, tw.Say, "the wait is only announced once")
	tw = c.post(t, channels.StatusURL(1, 3), twilio.Speech(c.sid, c.customer, ""))
	require.Nil(t, tw.Redirect, "the last poll ends the wait")
	require.Contains(t, tw.spoken(), "Sie erhalten die Bestätigung per SMS")
}

// TestVoiceReplyWithoutBookingIsSaid: a sentence the conversation answers
// without a booking (a greeting: it asks for the wish) has its reply said
// in the call, and the caller is listened to again.
func TestVoiceReplyWithoutBookingIsSaid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gw.VoiceConfirmWait = 10 * time.Minute
	c := newCall(e.sim)
	first := c.say(t, "Hallo")
	var reply string
	testsupport.Eventually(t, 30*time.Second, "the conversation's reply reserved", func() bool {
		return e.pool.QueryRow(context.Background(), `SELECT body FROM outbox_messages WHERE kind = $1`,
			"reply:"+c.sid+":gather:1").Scan(&reply) == nil
	})
	tw := c.follow(t, first)
	require.Nil(t, tw.Redirect)
	require.Equal(t, reply, tw.spoken())
	tw.gathersStep(t, 2)
	require.Zero(t, e.count(t, `SELECT count(*) FROM booking_intents`), "nothing booked")
	require.Equal(t, 1.0, testutil.ToFloat64(e.gw.Metrics.VoiceOutcomes().WithLabelValues(channels.VoiceOutcomeReply)))
}

// TestVoiceRebookAfterCancelIsConfirmedInTheCall: a caller books, cancels
// in a second call, and asks for the same slot in a third: the third
// call's poll says the new confirmation (it used to say the cancelled
// booking was "in Bearbeitung"), the calendar holds the new booking under
// a reference of its own, and two written confirmations reached Twilio.
func TestVoiceRebookAfterCancelIsConfirmedInTheCall(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	e.gw.VoiceConfirmWait = 10 * time.Minute
	sim := twilio.Simulator{GatewayURL: e.url, PublicBaseURL: e.gw.PublicBaseURL, AuthToken: e.gw.TwilioAuthToken}
	first := newCall(sim)
	day := nextTuesday(t)
	wish := "Reifenwechsel am " + dateText(day) + " um 15 Uhr"
	first.follow(t, first.say(t, wish))
	testsupport.Eventually(t, 90*time.Second, "the first confirmation", func() bool {
		return sentTo(e.twilio, first.customer, "Ihr Termin ist bestätigt") == 1
	})
	cancel := newCall(sim)
	cancel.customer = first.customer
	cancel.say(t, "Ich muss absagen")
	testsupport.Eventually(t, 90*time.Second, "the cancellation", func() bool {
		return sentTo(e.twilio, first.customer, "storniert") == 1
	})

	again := newCall(sim)
	again.customer = first.customer
	next := again.follow(t, again.say(t, wish))
	testsupport.Eventually(t, 90*time.Second, "the second confirmation", func() bool {
		return sentTo(e.twilio, first.customer, "Ihr Termin ist bestätigt") == 2
	})
	if next.Redirect != nil {
		next = again.follow(t, next)
	}
	require.Contains(t, next.spoken(), "Ihr Termin ist bestätigt")
	require.NotContains(t, next.spoken(), "Bearbeitung")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, first.customer))
	require.Equal(t, 2, e.count(t, `SELECT count(DISTINCT reference) FROM calendar_reservations WHERE customer = $1`, first.customer))
}
