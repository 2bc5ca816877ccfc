package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// ---- voice: the TwiML answer to a spoken sentence ----------------------

// Variant names of the voice item; the report finds series by them.
const (
	voiceGather = "spoken sentence: signed gather (inbox insert), answered with the wait, then handed on (SignalWithStart, mark delivered)"
	voicePoll   = "status poll: signed redirect (one SQL read), nothing decided yet, answered with the next wait"
)

// voiceTargetMs is the target: Twilio plays silence until the
// answer to a gather arrives.
const voiceTargetMs = 100.0

// voiceLoad is how much the voice item does: at each rate, reps runs of
// perRun each, first the gathers, then a status poll of each of them.
type voiceLoad struct {
	rates  []int // requests per second
	perRun time.Duration
	reps   int
}

type voiceResult struct {
	series []*series // conc holds the rate (requests per second)
	reps   int
}

const voiceText = "Reifenwechsel am 1.12. um 14 Uhr"

// callSID is the seq-th call of a run.
func callSID(base, seq int) string { return fmt.Sprintf("CAvoice%012d%013d", base, seq) }

// gatherOp posts the signed gather of call seq (a new caller each) and
// expects the wait TwiML: the answer Twilio plays while the booking runs.
func (e ingestEnv) gatherOp() Op {
	return func(ctx context.Context, seq int) error {
		return e.postVoice(ctx, channels.RouteVoiceGather+"?step=1", seq)
	}
}

// pollOp posts the first status poll of call seq, as Twilio does after
// the pause; nobody handles the sentence here, so it waits on.
func (e ingestEnv) pollOp() Op {
	return func(ctx context.Context, seq int) error {
		return e.postVoice(ctx, channels.StatusURL(1, 1), seq)
	}
}

func (e ingestEnv) postVoice(ctx context.Context, route string, seq int) error {
	status, body, err := e.sim.Post(ctx, route, twilio.Speech(callSID(e.base, seq), phone(e.base, seq), voiceText))
	if err != nil {
		return err
	}
	if status != http.StatusOK || !strings.Contains(body, "<Redirect") {
		return fmt.Errorf("%s: status %d: %s", route, status, body)
	}
	return nil
}

// paced drives n ops at a steady rate, each in its own goroutine: an open
// loop, as callers do not wait for each other's answers, so a slow answer
// shows as latency instead of slowing the arrivals down.
func paced(ctx context.Context, rate, n, base int, op Op) Result {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	samples := make([]Sample, n)
	var wg sync.WaitGroup
	begin := time.Now()
	for i := range n {
		if i > 0 {
			<-tick.C
		}
		wg.Go(func() {
			t0 := time.Now()
			err := op(ctx, base+i)
			samples[i] = Sample{Seq: base + i, Start: t0.Sub(begin), Latency: time.Since(t0), Err: err}
		})
	}
	wg.Wait()
	r := Result{Concurrency: rate, Elapsed: time.Since(begin), Samples: samples}
	r.tally()
	return r
}

// measurePaced is measure for a paced run.
func measurePaced(t *testing.T, s *series, rate, n, base int, op Op) {
	g0, p0 := cpuTimes()
	r := paced(context.Background(), rate, n, base, op)
	g1, p1 := cpuTimes()
	s.add(r, g1-g0, pgDelta(p0, p1))
	require.Zero(t, r.Errors, "%s at %d/s: %v", s.variant, rate, r.FirstErr)
	t.Logf("%s at %d/s: %v", s.variant, rate, r)
}

// measureVoice measures, per rate and repetition, the gateway's answer to
// new spoken sentences, then to the first status poll of each. The
// gateway's task queue has no worker, as in item 3: the answer's cost is
// the gateway's alone.
func measureVoice(t *testing.T, vl voiceLoad) voiceResult {
	e := newIngestEnv(t)
	// Twilio reaches the gateway over many connections: no cap on them,
	// so a connection still busy with a hand-off never delays an answer.
	e.sim.HTTP = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	res := voiceResult{reps: vl.reps}
	seq := 0
	for _, rate := range vl.rates {
		g, p := &series{variant: voiceGather, conc: rate}, &series{variant: voicePoll, conc: rate}
		n := max(1, int(vl.perRun.Seconds()*float64(rate)))
		for range vl.reps {
			measurePaced(t, g, rate, n, seq, e.gatherOp())
			measurePaced(t, p, rate, n, seq, e.pollOp())
			seq += n
		}
		res.series = append(res.series, g, p)
	}
	// Effects: every sentence recorded once and handed on, by the gateway
	// after its answer or, where that timed out under load, by the relay.
	require.Equal(t, seq, countRows(t, e.pool, `SELECT count(*) FROM inbox_events WHERE kind = $1`, channels.RouteVoiceGather))
	for countRows(t, e.pool, `SELECT count(*) FROM inbox_events WHERE state = 'pending'`) > 0 {
		_, err := e.gw.RelayPending(context.Background(), 0)
		require.NoError(t, err)
	}
	require.Equal(t, seq, countRows(t, e.pool, `SELECT count(*) FROM inbox_events WHERE kind = $1 AND state = 'delivered'`, channels.RouteVoiceGather))
	key, err := e.cfg.CustomerKeys().Key(config.DefaultTenant, phone(e.base, 0))
	require.NoError(t, err)
	requireSignalled(t, e.tc, conversation.WorkflowID(config.DefaultTenant, key))
	return res
}

func (r *report) voiceTables(b *strings.Builder) []target {
	fmt.Fprintf(b, "A caller's spoken sentence (`POST /webhooks/twilio/voice/gather`, signed) and the status poll Twilio's "+
		"`<Redirect>` makes a second later, each driven at a steady rate (an open loop: one request every 1/rate, "+
		"whatever the answers take), a new caller per request, %d runs per rate. No worker handles the sentences, "+
		"so the answer's cost is the gateway's alone: the poll finds nothing decided and answers the next wait.\n\n", r.voice.reps)
	b.WriteString("| variant | rate /s | ops | p50 ms | p95 ms | p99 ms | Go CPU µs/op | PG CPU µs/op |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var out []target
	for _, s := range r.voice.series {
		p99 := s.spread(func(r Result) float64 { return ms(r.P99()) })
		fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %s | %.0f | %.0f |\n", s.variant, s.conc, s.runs[0].Ops,
			s.spread(func(r Result) float64 { return ms(r.P50()) }).Format("%.2f"),
			s.spread(func(r Result) float64 { return ms(r.P95()) }).Format("%.2f"),
			p99.Format("%.2f"), durSpread(s.cpuGo).Median*1000, durSpread(s.cpuPG).Median*1000)
		if s.variant == voiceGather {
			out = append(out, target{fmt.Sprintf("voice: gather answer at %d/s", s.conc), fmt.Sprintf("p99 ≤ %.0f ms", voiceTargetMs),
				p99.Format("%.2f") + " ms (" + verdict(p99.Median <= voiceTargetMs) + ")"})
		}
	}
	return out
}
