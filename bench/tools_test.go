package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
)

// ---- 9. tools: a voice agent's tool calls at a steady 5/s ----------------

const toolsTitle = "9. Voice agents: tool calls at a steady 5 calls/s"

// The targets for a tool call within a spoken turn, measured from
// the platform's request to its response.
const (
	toolsRate     = 5 // calls per second
	toolsBookP95  = 200 * time.Millisecond
	toolsBookP99  = 500 * time.Millisecond
	toolsSlotsP95 = 50 * time.Millisecond
)

// toolsSizes is how much the tools item does: reps runs of n calls of
// each tool.
type toolsSizes struct{ n, reps int }

type toolsResult struct {
	book, slots []Result
	// phases are book_appointment's phases over every run, from the
	// agent's bookonce_agent_book_phase_seconds.
	phases map[string]histogram
	n      int
}

// measureTools runs the tools as Vapi calls them, against make run's
// worker and APIs with deposits by payment link: book_appointment for a
// new caller and slot each time (it answers once the slot is held and the
// link exists), then find_slots, each at a steady 5 calls/s.
func measureTools(t *testing.T, sz toolsSizes) toolsResult {
	e := newLatencyEnv(t)
	cfg := e.cfg
	cfg.DepositMode = config.DepositLink
	reg := prometheus.NewRegistry()
	svc := stack.Agent(cfg, e.pool, e.tc, reg, nil, testsupport.Tenants(t, e.pool), stack.Logger(cfg, io.Discard))
	srv := httptest.NewServer(svc.Handler(web.NewAuthLimiter(web.AuthFailuresPerMinute, web.AuthFailureBurst)))
	t.Cleanup(srv.Close)
	v := &agent.FakeVapi{URL: srv.URL + agent.RoutePlatforms + "/vapi", Token: config.DefaultAPIToken, Client: newClient()}
	tz, today := cfg.Timezone, time.Now().In(cfg.Timezone)
	res := toolsResult{n: sz.n}
	for rep := range sz.reps {
		base := rep * sz.n
		book := func(ctx context.Context, seq int) error {
			call := v.NewCall(phone(e.base, seq))
			a, err := tool(ctx, v, call, agent.ToolBookAppointment, map[string]any{
				"service": "tire-change", "start": bookingSlot(tz, today, seq).Format(time.RFC3339)})
			if err != nil {
				return err
			}
			var b agent.BookingAnswer
			if err := json.Unmarshal([]byte(a), &b); err != nil {
				return err
			}
			if b.Status != agent.StatusPending || b.PaymentURL == "" {
				return fmt.Errorf("book_appointment answered %s without the payment link: %s", b.Status, b.Message)
			}
			return nil
		}
		slots := func(ctx context.Context, seq int) error {
			_, err := tool(ctx, v, v.NewCall(phone(e.base, seq)), agent.ToolFindSlots, map[string]any{
				"service": "tire-change", "from": bookingSlot(tz, today, seq).Format(time.RFC3339)})
			return err
		}
		for _, run := range []struct {
			into *[]Result
			op   Op
			name agent.ToolName
		}{{&res.book, book, agent.ToolBookAppointment}, {&res.slots, slots, agent.ToolFindSlots}} {
			r := paced(context.Background(), toolsRate, sz.n, base, run.op)
			require.Zero(t, r.Errors, "%s: %v", run.name, r.FirstErr)
			t.Logf("%s at %d/s: %v", run.name, toolsRate, r)
			*run.into = append(*run.into, r)
		}
	}
	res.phases = histograms(t, reg, "bookonce_agent_book_phase_seconds", "phase")
	return res
}

// tool calls one tool as Vapi does and returns its result.
func tool(ctx context.Context, v *agent.FakeVapi, call agent.VapiCall, name agent.ToolName, args map[string]any) (string, error) {
	tc := agent.NewToolCall(name, args)
	a, err := v.Send(ctx, call, tc)
	if err != nil {
		return "", err
	}
	r, ok := a.Results[tc.ID]
	switch {
	case a.Status != http.StatusOK || !ok:
		return "", fmt.Errorf("%s: status %d: %s", name, a.Status, a.Body)
	case r.Error != "":
		return "", fmt.Errorf("%s: %s", name, r.Error)
	}
	return r.Result, nil
}

func (r *report) toolsTables(b *strings.Builder) []target {
	tr := r.tools
	fmt.Fprintf(b, "A voice agent's tool calls as Vapi sends them (`agent.FakeVapi`, one POST per call, the tenant's token), "+
		"against `make run`'s worker and APIs with deposits by payment link, %d calls per run at a steady %d/s (an open loop), "+
		"%d runs per tool; measured from the platform's request to its response. `book_appointment` books a new caller into "+
		"a slot of their own and answers once the slot is held and the payment link exists (`pending` with the link); "+
		"`find_slots` reads a day's free slots.\n\n", tr.n, toolsRate, len(tr.book))
	b.WriteString("| tool | run | p50 ms | p95 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|---:|\n")
	var ts []target
	for _, tool := range []struct {
		name string
		runs []Result
		p95  time.Duration
		p99  time.Duration
	}{{"book_appointment", tr.book, toolsBookP95, toolsBookP99}, {"find_slots", tr.slots, toolsSlotsP95, 0}} {
		var p95, p99 []float64
		for i, run := range tool.runs {
			fmt.Fprintf(b, "| %s | %d | %.0f | %.0f | %.0f | %.0f |\n", tool.name, i+1, ms(run.P50()), ms(run.P95()), ms(run.P99()), ms(run.Max()))
			p95, p99 = append(p95, ms(run.P95())), append(p99, ms(run.P99()))
		}
		s95 := SpreadOf(p95)
		ts = append(ts, target{"9. " + tool.name + " at 5/s, p95", fmt.Sprintf("≤ %s", tool.p95),
			fmt.Sprintf("%s ms (%s)", s95.Format("%.0f"), verdict(s95.Median <= ms(tool.p95)))})
		if tool.p99 > 0 {
			s99 := SpreadOf(p99)
			ts = append(ts, target{"9. " + tool.name + " at 5/s, p99", fmt.Sprintf("≤ %s", tool.p99),
				fmt.Sprintf("%s ms (%s)", s99.Format("%.0f"), verdict(s99.Median <= ms(tool.p99)))})
		}
	}
	b.WriteString("\nWhere `book_appointment`'s time goes (`bookonce_agent_book_phase_seconds`, every run; quantiles from the " +
		"histogram's buckets): **decide** validates the wish, claims the operation and takes the dedup decision; **start** " +
		"starts the appointment saga; **await** polls the saga until its state is worth answering (the hold and the link).\n\n")
	b.WriteString("| phase | calls | mean ms | p50 ms | p95 ms |\n|---|---:|---:|---:|---:|\n")
	for _, p := range []string{agent.PhaseDecide, agent.PhaseStart, agent.PhaseAwait, agent.PhaseLifecycle} {
		if h, ok := tr.phases[p]; ok {
			fmt.Fprintf(b, "| %s | %d | %.0f | %.0f | %.0f |\n", p, h.count, h.mean()*1000, h.quantile(0.5)*1000, h.quantile(0.95)*1000)
		}
	}
	return ts
}

// histogram is one series of a Prometheus histogram.
type histogram struct {
	count   uint64
	sum     float64
	uppers  []float64 // bucket upper bounds, ascending
	cumulus []uint64  // cumulative counts
}

func (h histogram) mean() float64 { return h.sum / float64(max(1, h.count)) }

// quantile interpolates linearly within the bucket holding q.
func (h histogram) quantile(q float64) float64 {
	rank := q * float64(h.count)
	lower, below := 0.0, uint64(0)
	for i, up := range h.uppers {
		if float64(h.cumulus[i]) >= rank {
			in := h.cumulus[i] - below
			if in == 0 {
				return up
			}
			return lower + (up-lower)*(rank-float64(below))/float64(in)
		}
		lower, below = up, h.cumulus[i]
	}
	return lower
}

// histograms reads the histogram family name from reg, by label.
func histograms(t *testing.T, reg *prometheus.Registry, name, label string) map[string]histogram {
	fams, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]histogram{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var key string
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					key = l.GetValue()
				}
			}
			hm := m.GetHistogram()
			h := histogram{count: hm.GetSampleCount(), sum: hm.GetSampleSum()}
			for _, bk := range hm.GetBucket() {
				h.uppers, h.cumulus = append(h.uppers, bk.GetUpperBound()), append(h.cumulus, bk.GetCumulativeCount())
			}
			out[key] = h
		}
	}
	return out
}
