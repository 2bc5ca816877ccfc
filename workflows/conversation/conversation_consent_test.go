package conversation_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/consent"
)

// TestConsentKeywordsAreAcknowledgedOncePerChange: STOP and START are
// recorded with their message and acknowledged when they change what the
// shop may send; a STOP while opted out is recorded, not answered again;
// a change that cannot be stored is not claimed, the customer is asked to
// write again. None of them is read as a booking wish.
func TestConsentKeywordsAreAcknowledgedOncePerChange(t *testing.T) {
	cases := []struct {
		name       string
		texts      []string
		consentErr error
		recorded   []consent.Action
		replies    []string
	}{
		{name: "stop twice", texts: []string{"STOP", "stopp"}, recorded: []consent.Action{consent.OptOut, consent.OptOut},
			replies: []string{"keine Erinnerungen mehr"}},
		{name: "stop, then start", texts: []string{"Abmelden", "START"}, recorded: []consent.Action{consent.OptOut, consent.OptIn},
			replies: []string{"keine Erinnerungen mehr", "wieder Erinnerungen"}},
		{name: "start while subscribed", texts: []string{"anmelden"}, recorded: []consent.Action{consent.OptIn}},
		{name: "not stored", texts: []string{"STOP"}, consentErr: temporal.NewNonRetryableApplicationError("no store", "ConsentFinal", nil),
			replies: []string{"nicht gespeichert"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{consentErr: tc.consentErr}
			var signals []signal
			for i, text := range tc.texts {
				signals = append(signals, whatsapp(time.Duration(i+1)*time.Second, "SM"+text, text))
			}
			runConversation(t, f, unitConversationInput(len(tc.texts)), signals)
			var recorded []consent.Action
			for _, c := range f.consents {
				recorded = append(recorded, c.Action)
				require.Equal(t, unitCustomer, c.Customer)
				require.Equal(t, "whatsapp", c.Channel)
				require.Equal(t, "SM", c.EventID[:2], "the message that made the change")
			}
			require.Equal(t, tc.recorded, recorded)
			require.Len(t, f.replies, len(tc.replies))
			for i, want := range tc.replies {
				require.Contains(t, f.replies[i].Text, want)
			}
			require.Empty(t, f.decided, "no wish")
			require.Empty(t, f.reviews)
		})
	}
}
