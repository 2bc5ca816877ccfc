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
// else overlaps it. A moved booking's new slot counts beside its old one
// (both are held while it moves).
func TestSlotsNeverCompete(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	all, sl := generate(1200, rand.New(rand.NewPCG(3, 4)), loc, time.Now(), 1)
	planChanges(all, rand.New(rand.NewPCG(3, 5)), sl, ChangeShares{Cancel: 10, Reschedule: 30, Rebook: 15, EarlyCancel: 10}) // more moves than the drill's, to crowd the days
	moves := 0
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
		if s.Change != nil && s.Change.Kind.moves() {
			moves++
			require.NotEqual(t, time.Sunday, s.Change.To.Weekday())
			require.False(t, s.Change.To.Equal(s.Wishes[0].Start))
			spans = append(spans, span{s.Change.To, s.Change.To.Add(90 * time.Minute)})
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
	require.Greater(t, moves, 200, "moves were planned")
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

// TestChangeTextsAreUnderstood: a cancel's words are read as a cancel, and
// a move's name exactly its new slot (by weekday only within the coming
// week), so the drill measures the lifecycle, not the extractor.
func TestChangeTextsAreUnderstood(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	now := time.Now()
	all, sl := generate(300, rand.New(rand.NewPCG(1, 2)), loc, now, 7)
	planChanges(all, rand.New(rand.NewPCG(1, 5)), sl, ChangeShares{10, 10, DefaultRebookShare, DefaultEarlyCancelShare})
	kinds := map[ChangeKind]int{}
	weekday := 0
	for _, s := range all {
		if s.Change == nil {
			continue
		}
		kinds[s.Change.Kind]++
		require.Len(t, s.Wishes, 1, "a change names no booking: only one-wish customers change")
		for p := range 6 {
			c := *s.Change
			c.Phrasing = p
			text := changeText(c, now)
			r, err := intent.Rules{}.Extract(context.Background(), text, now, loc, intent.DemoCatalogue())
			require.NoError(t, err, text)
			if c.Kind.cancels() {
				require.Equal(t, intent.KindCancel, r.Kind, text)
				continue
			}
			if withinWeek(c.To, now.In(loc)) && p%3 != 0 {
				weekday++
			}
			require.True(t, r.HasDate && r.HasTime && c.To.Equal(r.Start), "%q: want %v, got %v", text, c.To, r.Start)
		}
	}
	require.Positive(t, kinds[Cancel])
	require.Positive(t, kinds[Reschedule])
	require.Positive(t, weekday, "some moves name the day by its weekday")
}

// TestChangeShares: about the asked share of one-wish customers cancel or
// move, every duplication is drawn, and a seed's scenarios are the same
// with or without changes.
func TestChangeShares(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	now := time.Now()
	plain := scenarios(1000, rand.New(rand.NewPCG(9, 9)), loc, now, 3)
	all, sl := generate(1000, rand.New(rand.NewPCG(9, 9)), loc, now, 3)
	planChanges(all, rand.New(rand.NewPCG(9, 5)), sl, ChangeShares{10, 10, DefaultRebookShare, DefaultEarlyCancelShare})
	single, kinds, dups, phases := 0, map[ChangeKind]int{}, map[Duplication]int{}, map[SagaPhase]int{}
	for i, s := range all {
		require.Equal(t, plain[i].Wishes, s.Wishes, "the changes draw from their own stream")
		if len(s.Wishes) == 1 {
			single++
		}
		if s.Change != nil {
			kinds[s.Change.Kind]++
			dups[s.Change.Dup]++
			phases[s.Change.Phase]++
			if s.Kind == Contention {
				require.True(t, s.Change.Kind == Cancel || s.Change.Kind == Reschedule, "a contended slot's rivals neither rebook nor cancel early")
			}
		}
	}
	for _, k := range []ChangeKind{Cancel, Reschedule} {
		require.InDelta(t, 0.10, float64(kinds[k])/float64(single), 0.03, "%s", k)
	}
	// Contention rivals draw no rebook or early cancel, so those shares
	// come out a little below what was asked.
	require.InDelta(t, 0.08, float64(kinds[Rebook]+kinds[MoveBack])/float64(single), 0.03)
	require.Positive(t, kinds[MoveBack])
	require.InDelta(t, 0.12, float64(kinds[CancelEarly])/float64(single), 0.04)
	for _, p := range SagaPhases {
		require.Positive(t, phases[p], "an early cancel aims at %s", p)
	}
	require.Len(t, dups, 3, "once, across channels and redelivered: %v", dups)
}
