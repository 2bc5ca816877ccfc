package drill

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/twilio"
)

// TestDuplicateMessagesCountsEveryMessageAtTwilio: the message check sees
// what reached the customer's phone, not only rows the outbox knows.
func TestDuplicateMessagesCountsEveryMessageAtTwilio(t *testing.T) {
	cb := func(id string) string { return "http://gw/v1/twilio/status?outbox_id=" + id }
	confirm := func(bk string) string {
		return "Ihr Termin ist bestätigt: Inspektion am 02.12.2026 10:00 (Buchung " + bk + ")."
	}
	kinds := map[string]string{"msg_r1": "reply:SM1", "msg_r2": "reply:SM2", "msg_c1": "confirmation", "msg_c2": "confirmation",
		"msg_m1": "reminder_17520h0m0s", "msg_m2": "reminder_8760h0m0s"}
	cases := []struct {
		name string
		msgs []twilio.FakeMessage
		want int
	}{
		{"one of each", []twilio.FakeMessage{
			{To: "+49151", Body: "Danke!", StatusCallback: cb("msg_r1")},
			{To: "+49151", Body: confirm("bk_1"), StatusCallback: cb("msg_c1")},
		}, 0},
		{"two replies with the same words to two customer messages", []twilio.FakeMessage{
			{To: "+49151", Body: "bereits in Bearbeitung", StatusCallback: cb("msg_r1")},
			{To: "+49151", Body: "bereits in Bearbeitung", StatusCallback: cb("msg_r2")},
		}, 0},
		{"two reminders of two offsets in the same words", []twilio.FakeMessage{
			{To: "+49151", Body: "Erinnerung: Inspektion", StatusCallback: cb("msg_m1")},
			{To: "+49151", Body: "Erinnerung: Inspektion", StatusCallback: cb("msg_m2")},
		}, 0},
		{"one reminder sent twice", []twilio.FakeMessage{
			{To: "+49151", Body: "Erinnerung: Inspektion", StatusCallback: cb("msg_m1")},
			{To: "+49151", Body: "Erinnerung: Inspektion", StatusCallback: cb("msg_m1")},
		}, 1},
		{"one reply row sent twice (a resend after a bare 503)", []twilio.FakeMessage{
			{To: "+49151", Body: "Danke!", StatusCallback: cb("msg_r1")},
			{To: "+49151", Body: "Danke!", StatusCallback: cb("msg_r1")},
		}, 1},
		{"one wish confirmed under two references", []twilio.FakeMessage{
			{To: "+49151", Body: confirm("bk_1"), StatusCallback: cb("msg_c1")},
			{To: "+49151", Body: confirm("bk_2"), StatusCallback: cb("msg_c2")},
		}, 1},
		{"a confirmation sent around the outbox", []twilio.FakeMessage{
			{To: "+49151", Body: confirm("bk_1"), StatusCallback: cb("msg_c1")},
			{To: "+49151", Body: confirm("bk_1")},
		}, 1},
		{"the same confirmation text to two customers", []twilio.FakeMessage{
			{To: "+49151", Body: confirm("bk_1"), StatusCallback: cb("msg_c1")},
			{To: "+49152", Body: confirm("bk_2"), StatusCallback: cb("msg_c2")},
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, duplicateMessages(tc.msgs, kinds))
		})
	}
}

// TestContentionLoserMustBeOfferedAnotherTime: a loser passes only with a
// message that names a time other than the wished one.
func TestContentionLoserMustBeOfferedAnotherTime(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	wished := time.Date(2026, 12, 2, 10, 0, 0, 0, loc)
	loser := func(customer string) wishState {
		return wishState{scenario: Scenario{Kind: Contention, Customer: customer, Group: 1, Wishes: []Wish{{"inspection", wished}}},
			outcome: Rejected, reason: "Rejected slot_unavailable"}
	}
	winner := wishState{scenario: Scenario{Kind: Contention, Customer: "+1", Group: 1, Wishes: []Wish{{"inspection", wished}}}, outcome: Confirmed}
	texts := map[string][]string{
		"+2": {"Danke! Wir buchen Inspektion am 02.12.2026 10:00; die Bestätigung folgt.",
			"Ihr Wunschtermin (Inspektion, 02.12.2026 10:00) ist leider schon vergeben. Frei wären: 02.12.2026 12:00. Welcher passt Ihnen?"},
		"+3": {"Danke! Wir buchen Inspektion am 02.12.2026 10:00; die Bestätigung folgt."},
	}
	c := contentionOf([]wishState{winner, loser("+2"), loser("+3")}, texts, loc)
	require.Equal(t, 1, c.Slots)
	require.Equal(t, 3, c.Rivals)
	require.Equal(t, 1, c.Booked)
	require.Equal(t, 2, c.Lost)
	require.Equal(t, 1, c.Offered, "only the loser told another time was offered one")
	require.Len(t, c.NotOffered, 1)
}

// TestLostAuthorisationEndsWhenLookedUp: an authorisation whose answer
// was lost and never sent again ends reconciled when a later lookup by
// reference answered with its intent; a lookup whose answer was lost too,
// or that found another intent, ends nothing.
func TestLostAuthorisationEndsWhenLookedUp(t *testing.T) {
	at := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	lost := exchange{upstream: upstreamPayments, at: at, Exchange: chaos.Exchange{
		Method: "POST", Path: "/v1/payment_intents", IdempotencyKey: "bko1_a", UpstreamStatus: 200, Fault: chaos.DropAfterCommit,
		Body: []byte("metadata[booking_reference]=appointment:demo:x&metadata[step]=deposit"), Response: []byte(`{"id":"pi_1","object":"payment_intent"}`)}}
	search := func(found string, fault chaos.Fault) exchange {
		return exchange{upstream: upstreamPayments, at: at.Add(2 * time.Second), Exchange: chaos.Exchange{
			Method: "GET", Path: "/v1/payment_intents/search", UpstreamStatus: 200, Fault: fault,
			Response: []byte(`{"object":"search_result","data":[{"id":"` + found + `","object":"payment_intent"}]}`)}}
	}
	cases := []struct {
		name  string
		later exchange
		ended string
	}{
		{"found by reference", search("pi_1", ""), "reconciled"},
		{"the lookup's answer lost too", search("pi_1", chaos.DropAfterCommit), "unresolved"},
		{"another intent found", search("pi_2", ""), "unresolved"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ended, took, timed := unknownEvidence{}.ending([]exchange{lost, tc.later}, 0)
			require.Equal(t, tc.ended, ended)
			require.Equal(t, tc.ended == "reconciled", timed)
			if timed {
				require.Equal(t, 2*time.Second, took)
			}
		})
	}
}

func TestLostAnswersOfKeylessProtocolsEndWhenRedelivered(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	webhook := func(event string, status int, sec int) exchange {
		return exchange{upstream: upstreamWebhooks, at: at.Add(time.Duration(sec) * time.Second), Exchange: chaos.Exchange{
			Method: "POST", Path: "/webhooks/stripe", Body: []byte(`{"id":"` + event + `"}`), UpstreamStatus: status}}
	}
	page := func(session string, status int, sec int) exchange {
		return exchange{upstream: upstreamPayments, at: at.Add(time.Duration(sec) * time.Second), Exchange: chaos.Exchange{
			Method: "POST", Path: "/pay/" + session + "/confirm", UpstreamStatus: status}}
	}
	cases := []struct {
		name  string
		all   []exchange
		ended string
	}{
		{"a webhook delivered again", []exchange{webhook("evt_1", 200, 0), webhook("evt_1", 200, 3)}, "redelivered"},
		{"another event is no redelivery", []exchange{webhook("evt_1", 200, 0), webhook("evt_2", 200, 3)}, "unresolved"},
		{"a redelivery nobody answered", []exchange{webhook("evt_1", 200, 0), webhook("evt_1", 0, 3)}, "unresolved"},
		{"the page's form posted again, found paid", []exchange{page("cs_1", 200, 0), page("cs_1", 409, 1)}, "redelivered"},
	}
	answered := webhook("evt_1", 200, 0)
	lost := webhook("evt_1", 200, 1)
	lost.Fault = chaos.DropAfterCommit
	ended, _, _ := unknownEvidence{}.ending([]exchange{answered, lost}, 1)
	require.Equal(t, "duplicate", ended, "the deliberate second delivery of an answered event")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ended, took, timed := unknownEvidence{}.ending(tc.all, 0)
			require.Equal(t, tc.ended, ended)
			require.Equal(t, tc.ended == "redelivered", timed)
			if timed {
				require.Equal(t, tc.all[1].at.Sub(tc.all[0].at), took)
			}
		})
	}
}
