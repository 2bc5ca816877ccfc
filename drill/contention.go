package drill

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"

	"github.com/bookonce/bookonce/internal/mask"
)

// contention draws the rivals of one contended slot: rivalSize customers,
// IDs from first on, one wish each, all the same.
func contention(first int, rng *rand.Rand, slots *slots, run int) []Scenario {
	w := Wish{Service: services[rng.IntN(len(services))], Start: slots.contended()}
	out := make([]Scenario, rivalSize)
	for i := range out {
		id := first + i
		out[i] = Scenario{ID: id, Kind: Contention, Customer: fmt.Sprintf("+49151%02d%06d", run%100, id), Wishes: []Wish{w},
			Redeliveries: rng.IntN(4), Concurrent: rng.IntN(2) == 0, Phrasing: rng.IntN(1 << 16), Group: first + 1}
	}
	return out
}

// Rivalry measures the contended slots: how many rivals won, how many
// lost, and whether every loser was told which slots are free.
type Rivalry struct {
	// Slots are contended slots, Rivals the customers competing for them.
	Slots  int `json:"slots"`
	Rivals int `json:"rivals"`
	// Booked won the slot; Lost were rejected because it was taken.
	Booked int `json:"booked"`
	Lost   int `json:"lost"`
	// Offered are losers whose reply at Twilio names at least one other
	// free time; every loser must be offered (NotOffered lists the rest).
	Offered    int      `json:"offered_alternatives"`
	NotOffered []string `json:"not_offered,omitempty"`
	// Other rivals ended otherwise (in review, or rejected for another
	// reason); listed, they fail the drill only through the other checks.
	Other []string `json:"other,omitempty"`
}

// timeInText finds the times a message names ("02.01.2006 15:04").
var timeInText = regexp.MustCompile(`\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}`)

// contentionOf classifies the rivals' outcomes; texts are every message
// at the fake Twilio by recipient.
func contentionOf(states []wishState, texts map[string][]string, loc *time.Location) Rivalry {
	var c Rivalry
	groups := map[int]bool{}
	for _, st := range states {
		s := st.scenario
		if s.Kind != Contention {
			continue
		}
		groups[s.Group] = true
		c.Rivals++
		who := fmt.Sprintf("%s (%s)", mask.Phones(s.Customer), st.workflowID)
		switch {
		case st.outcome == Confirmed:
			c.Booked++
		case st.outcome == Rejected && strings.Contains(st.reason, "slot_unavailable"):
			c.Lost++
			if offersOtherTime(texts[s.Customer], s.Wishes[0].Start.In(loc)) {
				c.Offered++
			} else if len(c.NotOffered) < 10 {
				c.NotOffered = append(c.NotOffered, who)
			}
		default:
			if len(c.Other) < 10 {
				c.Other = append(c.Other, fmt.Sprintf("%s: %s %s", who, st.outcome, st.reason))
			}
		}
	}
	c.Slots = len(groups)
	return c
}

// offersOtherTime reports whether one of the messages names a time other
// than the wished one: the alternatives the calendar offered.
func offersOtherTime(texts []string, wished time.Time) bool {
	w := wished.Format("02.01.2006 15:04")
	for _, t := range texts {
		for _, found := range timeInText.FindAllString(t, -1) {
			if found != w {
				return true
			}
		}
	}
	return false
}
