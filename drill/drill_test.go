package drill

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/intent"
)

// TestPhrasingsAreUnderstood: every wording the drill sends is understood
// as exactly the wish it stands for, or the drill would measure the
// extractor instead of the exactly-once machinery.
func TestPhrasingsAreUnderstood(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	now := time.Now()
	all := scenarios(400, rand.New(rand.NewPCG(1, 2)), loc, now, 7)
	kinds := map[Kind]int{}
	for _, s := range all {
		kinds[s.Kind]++
		for _, w := range s.Wishes {
			require.True(t, w.Start.After(now))
			for _, list := range [][]func(string, time.Time) string{firstTexts, againTexts, spokenTexts} {
				for i := range list {
					text := pick(list, i, w)
					r, err := intent.Rules{}.Extract(context.Background(), text, now, loc, intent.DemoCatalogue())
					require.NoError(t, err, text)
					require.Equal(t, w.Service, r.Service, text)
					require.True(t, w.Start.Equal(r.Start), "%q: want %v, got %v", text, w.Start, r.Start)
				}
			}
			// An agent passes the slot on in words (book_appointment's start).
			for i := range agentSlotTexts {
				text := slotText(w.Start, true, i)
				r, err := intent.Rules{}.Extract(context.Background(), text, now, loc, intent.DemoCatalogue())
				require.NoError(t, err, text)
				require.True(t, r.HasDate && r.HasTime && w.Start.Equal(r.Start), "%q: want %v, got %v", text, w.Start, r.Start)
			}
		}
	}
	for _, k := range Kinds {
		require.Positive(t, kinds[k], "the mix has every kind: %s", k)
	}
}

// TestSlotsNeverCompete: outside the contended slots no three bookings
// overlap (two bays), a second booking is on another day, an ambiguous
// pair on the same day; a contended slot has rivalSize rivals and nothing
// else overlaps it.
func TestSlotsNeverCompete(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	all := scenarios(1200, rand.New(rand.NewPCG(3, 4)), loc, time.Now(), 1)
	type span struct{ from, to time.Time }
	var spans, contended []span
	total := 0
	rivals := map[int]int{}
	for _, s := range all {
		total += len(s.Wishes)
		for _, w := range s.Wishes {
			require.NotEqual(t, time.Sunday, w.Start.Weekday())
			if s.Kind == Contention {
				rivals[s.Group]++
				if rivals[s.Group] == 1 {
					contended = append(contended, span{w.Start, w.Start.Add(90 * time.Minute)})
				}
				continue
			}
			spans = append(spans, span{w.Start, w.Start.Add(90 * time.Minute)})
		}
		switch s.Kind {
		case Second:
			require.NotEqual(t, s.Wishes[0].Start.Format(time.DateOnly), s.Wishes[1].Start.Format(time.DateOnly))
			require.NotEqual(t, s.Wishes[0].Service, s.Wishes[1].Service)
		case Ambiguous:
			require.Equal(t, s.Wishes[0].Start.Format(time.DateOnly), s.Wishes[1].Start.Format(time.DateOnly))
			require.Equal(t, s.Wishes[0].Service, s.Wishes[1].Service)
		}
	}
	require.Equal(t, 1200, total)
	// The most bookings running at once is reached at some start.
	for _, a := range spans {
		running := 0
		for _, b := range spans {
			if !a.from.Before(b.from) && a.from.Before(b.to) {
				running++
			}
		}
		require.LessOrEqual(t, running, 2, "at %v", a.from)
	}
	// A contended slot is raced for by its rivals only: no other wish
	// overlaps it, so its losers lost to each other.
	require.NotEmpty(t, contended)
	for _, c := range contended {
		for _, b := range spans {
			require.False(t, b.from.Before(c.to) && c.from.Before(b.to), "contended %v overlaps a wish at %v", c.from, b.from)
		}
	}
	for g, n := range rivals {
		require.Equal(t, rivalSize, n, "group %d", g)
	}
}
