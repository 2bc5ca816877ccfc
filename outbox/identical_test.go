package outbox_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ownMessage returns the SID of the message at the fake Twilio whose
// status callback names the outbox row id: the message that row's send
// produced.
func (e *env) ownMessage(id string) string {
	e.t.Helper()
	for _, m := range e.fake.Messages() {
		if strings.HasSuffix(m.StatusCallback, "outbox_id="+id) {
			return m.Sid
		}
	}
	e.t.Fatalf("no message at the fake names outbox row %s", id)
	return ""
}

// TestReconcileSkipsTheSameTextSentForAnotherRow: the lookup reaches back
// by Twilio's clock skew, so a message of the same text sent minutes
// earlier for another row matches too. Reconciliation must take the
// message no other row holds; before, it took the earliest, collided with
// the other row's SID and handed a sent message to a person.
func TestReconcileSkipsTheSameTextSentForAnotherRow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	earlier := e.reserve("bk_1", "whatsapp", customer, "Danke, bis bald!")
	require.Equal(t, 1, e.runOnce(s))

	later := e.reserve("bk_2", "whatsapp", customer, "Danke, bis bald!")
	e.fake.DropNextResponse()
	require.Equal(t, 0, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 2)

	e.advance(sendTimeout)
	require.Equal(t, 1, e.runOnce(s))
	require.Equal(t, row{State: "sent", ProviderID: e.ownMessage(earlier.ID), Attempted: true, Attempts: 1}, e.row(earlier.ID))
	require.Equal(t, "sent", e.row(later.ID).State)
	require.Equal(t, e.ownMessage(later.ID), e.row(later.ID).ProviderID)
	require.Len(t, e.fake.Messages(), 2, "found, not sent again")
}

// TestIdenticalTextsWithLostResponsesAreEachFound: two rows of the same
// text whose answers were both lost are each matched to a message of
// their own; no message is attributed to two rows and none is resent.
func TestIdenticalTextsWithLostResponsesAreEachFound(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := e.relay()
	a := e.reserve("bk_1", "whatsapp", customer, "Danke, bis bald!")
	b := e.reserve("bk_2", "whatsapp", customer, "Danke, bis bald!")
	e.fake.DropNextResponse()
	e.fake.DropNextResponse()
	require.Equal(t, 0, e.runOnce(s))
	require.Len(t, e.fake.Messages(), 2)

	e.advance(sendTimeout)
	require.Equal(t, 2, e.runOnce(s))
	ra, rb := e.row(a.ID), e.row(b.ID)
	require.Equal(t, []string{"sent", "sent"}, []string{ra.State, rb.State})
	require.NotEqual(t, ra.ProviderID, rb.ProviderID, "one Twilio message is never attributed to two rows")
	require.ElementsMatch(t, []string{e.fake.Messages()[0].Sid, e.fake.Messages()[1].Sid}, []string{ra.ProviderID, rb.ProviderID})
	require.Len(t, e.fake.Messages(), 2, "found, not sent again")
}
