package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// vapi is a fake Vapi sending to the env's agent listener with the demo
// tenant's credentials.
func (e env) vapi() *agent.FakeVapi {
	return &agent.FakeVapi{URL: e.url + agent.RoutePlatforms + "/vapi", Token: devToken, Secret: vapiSecret}
}

// retell is a fake Retell calling the env's agent listener for the demo
// tenant, signing with its API key.
func (e env) retell() *agent.FakeRetell {
	return &agent.FakeRetell{URL: e.url + agent.RoutePlatforms + "/retell", Token: devToken, APIKey: retellKey}
}

// elevenLabs is a fake ElevenLabs calling the env's agent listener.
func (e env) elevenLabs() *agent.FakeElevenLabs {
	return &agent.FakeElevenLabs{URL: e.url + agent.RoutePlatforms + "/elevenlabs", Token: devToken}
}

// requireOneBooking: the customer has one booking, one deposit and one
// confirmation at the fake Twilio, whatever the platform delivered.
func (e env) requireOneBooking(t *testing.T, customer string) {
	t.Helper()
	ctx := context.Background()
	var ref string
	testsupport.Eventually(t, 60*time.Second, "the booking confirmed and its confirmation sent", func() bool {
		err := e.pool.QueryRow(ctx, `SELECT o.reference FROM outbox_messages o JOIN calendar_reservations r ON r.reference = o.reference
			WHERE r.customer = $1 AND o.kind = 'confirmation' AND o.provider_id IS NOT NULL`, customer).Scan(&ref)
		return err == nil
	})
	e.requireReservations(t, customer, 1)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM payment_intents WHERE metadata->>'booking_reference' = $1`, ref), "one deposit")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM payment_intents p JOIN calendar_reservations r ON r.reference = p.metadata->>'booking_reference'
		WHERE r.customer = $1`, customer), "no deposit under another reference")
	sent := 0
	for _, m := range e.twilio.Messages() {
		if strings.Contains(m.To, customer) {
			sent++
		}
	}
	require.Equal(t, 1, sent, "one message to the customer: the confirmation")
}

// bookingOf decodes a book_appointment result as the model reads it.
func bookingOf(t *testing.T, a agent.VapiAnswer, id string) agent.BookingAnswer {
	t.Helper()
	require.Equal(t, http.StatusOK, a.Status, string(a.Body))
	r, ok := a.Results[id]
	require.True(t, ok, "a result for tool call %s in %s", id, a.Body)
	require.Empty(t, r.Error)
	var b agent.BookingAnswer
	require.NoError(t, json.Unmarshal([]byte(r.Result), &b), r.Result)
	return b
}

// TestVapiAnswersEveryCallOfATurnInItsFormat: a turn with several tool
// calls gets one result per call, by tool-call ID, in Vapi's
// {"results": [{"toolCallId", "result"}]} with the result a string; a
// tool the model made up is an error result, not a failed delivery; a
// message that calls no tool is acknowledged.
func TestVapiAnswersEveryCallOfATurnInItsFormat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.vapi()
	call := v.NewCall(newCustomer())
	services := agent.NewToolCall(agent.ToolListServices, nil)
	slots := agent.NewToolCall(agent.ToolFindSlots, map[string]any{"service": "inspection", "from": testsupport.Slot(t, time.Thursday, 8).Format(time.RFC3339)})
	bogus := agent.NewToolCall("book_a_table", map[string]any{})
	a := send(t, v, call, services, slots, bogus)

	var raw struct {
		Results []map[string]any `json:"results"`
	}
	require.NoError(t, json.Unmarshal(a.Body, &raw))
	require.Len(t, raw.Results, 3)
	for i, id := range []string{services.ID, slots.ID, bogus.ID} {
		require.Equal(t, id, raw.Results[i]["toolCallId"], "results in the order of the calls")
	}
	var list agent.ListServicesOutput
	require.NoError(t, json.Unmarshal([]byte(a.Results[services.ID].Result), &list))
	require.NotEmpty(t, list.Services)
	var found agent.FindSlotsOutput
	require.NoError(t, json.Unmarshal([]byte(a.Results[slots.ID].Result), &found))
	require.NotEmpty(t, found.Slots)
	require.Contains(t, a.Results[bogus.ID].Error, "no tool named book_a_table")

	update, err := v.Deliver(context.Background(), []byte(`{"message":{"type":"status-update","status":"in-progress","call":{"id":"`+call.ID+`"}}}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, update.Status, "a message that calls no tool is acknowledged")
	require.JSONEq(t, `{}`, string(update.Body))
}

// TestVapiUnsignedOrWronglySignedIsRefused: with a secret configured, a
// delivery without the signature, with another secret's, with an old
// timestamp or without the tenant's token is refused and books nothing.
func TestVapiUnsignedOrWronglySignedIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name   string
		change func(v *agent.FakeVapi)
	}{
		{"unsigned", func(v *agent.FakeVapi) { v.Secret = "" }},
		{"another secret", func(v *agent.FakeVapi) { v.Secret = "vapi-another-secret-0123456789" }},
		{"an old signature", func(v *agent.FakeVapi) { v.Now = func() time.Time { return time.Now().Add(-10 * time.Minute) } }},
		{"no token", func(v *agent.FakeVapi) { v.Token = "" }},
	}
	customer := newCustomer()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := e.vapi()
			c.change(v)
			a, err := v.Send(context.Background(), v.NewCall(customer), agent.NewToolCall(agent.ToolBookAppointment, map[string]any{
				"service": "oil-change", "start": testsupport.Slot(t, time.Friday, 9).Format(time.RFC3339)}))
			require.NoError(t, err)
			require.Equal(t, http.StatusUnauthorized, a.Status, string(a.Body))
			require.Contains(t, string(a.Body), `"status":401`, "problem+json")
		})
	}
	require.Zero(t, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, customer), "nothing booked")
}

// send delivers calls and requires an answer.
func send(t *testing.T, v *agent.FakeVapi, call agent.VapiCall, calls ...agent.ToolCall) agent.VapiAnswer {
	t.Helper()
	a, err := v.Send(context.Background(), call, calls...)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, a.Status, string(a.Body))
	return a
}

// TestVapiTwiceInOneTurnIsOneBooking: the model asks for the same booking
// twice in one turn (two tool calls in one delivery, run side by side):
// one booking, and both results name it.
func TestVapiTwiceInOneTurnIsOneBooking(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.vapi()
	customer := newCustomer()
	args := map[string]any{"service": "oil-change", "start": testsupport.Slot(t, time.Thursday, 15).Format(time.RFC3339)}
	one, two := agent.NewToolCall(agent.ToolBookAppointment, args), agent.NewToolCall(agent.ToolBookAppointment, args)
	a := send(t, v, v.NewCall(customer), one, two)
	require.Equal(t, bookingOf(t, a, one.ID).WorkflowID, bookingOf(t, a, two.ID).WorkflowID)
	e.requireOneBooking(t, customer)
}
