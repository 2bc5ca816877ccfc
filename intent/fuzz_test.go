package intent_test

import (
	"context"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
)

// FuzzExtract: no input panics, a start is always whole minutes, a booking
// without service, date or time always asks, and Validate copes with
// whatever Extract returns. Seeds: the table above plus
// testdata/fuzz/FuzzExtract.
func FuzzExtract(f *testing.F) {
	for _, tc := range extractCases {
		f.Add(tc.text)
	}
	cat := intent.DemoCatalogue()
	cat.Resources = []string{"Bühne 1", "Bühne 2"}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := intent.Rules{}.Extract(context.Background(), text, now, berlin, cat)
		require.NoError(t, err)
		require.Contains(t, []intent.Kind{intent.KindBook, intent.KindConfirm, intent.KindCancel, intent.KindReschedule, intent.KindUnclear}, r.Kind)
		require.Contains(t, []string{"de", "en"}, r.Lang)
		require.True(t, utf8.ValidString(r.Question))
		if !r.Start.IsZero() {
			require.Zero(t, r.Start.Second())
			require.Zero(t, r.Start.Nanosecond())
			require.True(t, r.Start.Equal(r.Start.Truncate(time.Minute)), "start %v not minute-aligned", r.Start)
			require.True(t, r.HasDate && r.HasTime)
			require.Equal(t, berlin, r.Start.Location())
		}
		if r.Kind == intent.KindBook && (r.Service == "" || r.Start.IsZero()) {
			require.NotEmpty(t, r.Question, "a booking with a gap must ask")
		}
		if r.Kind == intent.KindUnclear {
			require.NotEmpty(t, r.Question)
		}
		again, err := intent.Rules{}.Extract(context.Background(), text, now, berlin, cat)
		require.NoError(t, err)
		require.Equal(t, r, again, "extraction must be deterministic")
		_ = intent.Validate(r, now, berlin, cat)
	})
}
