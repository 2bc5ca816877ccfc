package drill

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/tenants"
)

// TestCancelAnswersTellWhatHappened: the drill counts a cancel as done
// only on the texts that say so. cancel_several and cancel_not_possible
// name "storniert" too, but nothing was cancelled; counting them as
// cancelled sent rebooks that were rightly answered "in progress".
func TestCancelAnswersTellWhatHappened(t *testing.T) {
	for _, tc := range []struct {
		template tenants.TemplateName
		want     string
	}{
		{tenants.TemplateBookingCancelled, cancelledWord},
		{tenants.TemplateBookingCancelledRefunded, cancelledWord},
		{tenants.TemplateBookingCancelledKept, cancelledWord},
		{tenants.TemplateCancelAlready, cancelledWord},
		{tenants.TemplateCancelConfirmKept, keptQuestion},
		{tenants.TemplateCancelInFlight, inFlightWords},
		{tenants.TemplateCancelSeveral, staffWords},
		{tenants.TemplateCancelConfirmed, staffWords},
		{tenants.TemplateCancelUnknown, staffWords},
		{tenants.TemplateCancelNotPossible, ""},
		{tenants.TemplateCancelNotRecorded, ""},
		{tenants.TemplateCancelWhich, ""},
	} {
		t.Run(string(tc.template), func(t *testing.T) {
			text, ok := tenants.DefaultText(tenants.German, tc.template)
			require.True(t, ok)
			require.Equal(t, tc.want, firstWord(text, cancelAnswers), text)
		})
	}
}
