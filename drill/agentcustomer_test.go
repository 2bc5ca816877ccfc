package drill

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
)

// TestAgentScenariosMixEveryRetry: the agents are 5 to 8 % of the
// bookings, drawn by the seed alone, and at every door (HTTP, Vapi,
// Retell, ElevenLabs) they do every follow-up (none, the same call again,
// a re-issued call, two in parallel, the slot rephrased), HTTP agents with
// and without an operation ID, some callers talking over a Vapi or
// ElevenLabs agent; the 100-booking drill's seed has agents on the
// platforms too.
func TestAgentScenariosMixEveryRetry(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	now := time.Now()
	all := scenarios(1000, rand.New(rand.NewPCG(2026, 1)), loc, now, 26)
	again := scenarios(1000, rand.New(rand.NewPCG(2026, 1)), loc, now, 26)
	follows, operations, agents := map[string]int{}, 0, 0
	byDoor, interrupted := map[string]int{}, map[agentDoor]int{}
	for i, s := range all {
		require.Equal(t, s.Kind, again[i].Kind, "the mix is the seed's")
		if s.Kind != Agent {
			continue
		}
		agents++
		require.Len(t, s.Wishes, 1)
		p := planOf(s)
		require.Equal(t, p, planOf(again[i]))
		follows[p.follow]++
		byDoor[string(doorOf(s))+" "+p.follow]++
		if s.Phrasing%3 == 0 {
			interrupted[doorOf(s)]++
		}
		if p.useOperation {
			operations++
		}
	}
	require.InDelta(t, 65, agents, 15, "agents among 1000 bookings (5 to 8 percent)")
	for _, f := range []string{followNone, followSameKey, followNewKey, followParallel, followRephrase} {
		require.Positive(t, follows[f], f)
		for _, d := range agentDoors {
			require.Positive(t, byDoor[string(d)+" "+f], "%s agents that do %s", d, f)
		}
	}
	require.Positive(t, interrupted[doorVapi], "Vapi callers who talk over the agent")
	require.Positive(t, interrupted[doorElevenLabs], "ElevenLabs callers who talk over the agent")
	require.Positive(t, operations)
	require.Less(t, operations, agents)

	drill100 := scenarios(100, rand.New(rand.NewPCG(100, 1)), loc, now, 0)
	n, platforms := 0, 0
	for _, s := range drill100 {
		if s.Kind == Agent {
			n++
			if doorOf(s) != doorHTTP {
				platforms++
			}
		}
	}
	require.Positive(t, n, "TestDrill100's seed has agent scenarios")
	require.Positive(t, platforms, "TestDrill100's seed has agents on voice platforms")
}

// TestAgentFindingsFailTheDrill: an unanswered call, diverging answers and
// a payment link the customer never got are failures.
func TestAgentFindingsFailTheDrill(t *testing.T) {
	for _, tc := range []struct {
		name    string
		traffic AgentTraffic
		failing int
	}{
		{"clean", AgentTraffic{Calls: 9, PaymentURLs: 3, AtTwilio: 3}, 0},
		{"unanswered", AgentTraffic{Calls: 9, Unanswered: 1, Errors: []string{"x"}}, 2},
		{"diverging", AgentTraffic{Calls: 9, Diverging: 1}, 1},
		{"link not sent", AgentTraffic{Calls: 9, PaymentURLs: 3, AtTwilio: 2}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Len(t, tc.traffic.failures(), tc.failing)
		})
	}
}

// TestLatestAnswerIsTheLastWithAStatus: an agent follows up on the last
// answer it got, not on a call that got none.
func TestLatestAnswerIsTheLastWithAStatus(t *testing.T) {
	pending := agent.BookingAnswer{Status: agent.StatusPending, WorkflowID: "appointment:demo:x"}
	booked := agent.BookingAnswer{Status: agent.StatusAlreadyBooked, WorkflowID: "appointment:demo:x"}
	for _, tc := range []struct {
		name    string
		answers []agent.BookingAnswer
		want    agent.BookingAnswer
	}{
		{"none", nil, agent.BookingAnswer{}},
		{"all unanswered", []agent.BookingAnswer{{}, {}}, agent.BookingAnswer{}},
		{"last unanswered", []agent.BookingAnswer{pending, {}}, pending},
		{"last answered", []agent.BookingAnswer{pending, booked}, booked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, latest(tc.answers))
		})
	}
}

// TestRelayCallersMixDropsAndInterrupts: a third of the calls go to
// ConversationRelay, drawn by the seed, some with the socket dropped
// before the answer and some talking over "one moment"; the 100-booking
// drill's seed has relay calls too.
func TestRelayCallersMixDropsAndInterrupts(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	calls, relay, dropped, interrupting := 0, 0, 0, 0
	for _, s := range scenarios(1000, rand.New(rand.NewPCG(2026, 1)), loc, time.Now(), 26) {
		if s.Kind != Voice && s.Kind != CrossChannel {
			continue
		}
		calls++
		if !viaRelay(s) {
			continue
		}
		relay++
		if s.Redeliveries > 0 {
			dropped++
		}
		if talksOver(s) {
			interrupting++
		}
	}
	require.InDelta(t, calls/3, relay, float64(calls)/10, "a third of %d calls", calls)
	require.Positive(t, dropped)
	require.Positive(t, interrupting)
	require.Less(t, interrupting, relay/2)

	n := 0
	for _, s := range scenarios(100, rand.New(rand.NewPCG(100, 1)), loc, time.Now(), 0) {
		if (s.Kind == Voice || s.Kind == CrossChannel) && viaRelay(s) {
			n++
		}
	}
	require.Positive(t, n, "TestDrill100's seed has relay calls")
}
