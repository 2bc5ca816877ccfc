package drill

import (
	"context"
	"fmt"
	mrand "math/rand/v2"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/tenants"
)

// upstreamAgent is the gateway's agent tools, as the drill's AI agents
// reach them.
const upstreamAgent = "agent"

// startAgent serves the agent tools in process, as the gateway process
// does on AGENT_LISTEN, with a fault proxy in front whose URL the drill's
// agents call (e.agentURL). Their exchanges are not in the exchange log:
// the agents count their own traffic (AgentTraffic), and the log's
// classification of unknown outcomes is about the downstream APIs.
func (e *env) startAgent(ctx context.Context, reg *prometheus.Registry, registry *tenants.Registry, calendarURL string) error {
	cfg := e.cfg
	cfg.CalendarURL = calendarURL // find_slots reaches the calendar through its proxy, as the worker does
	tools := stack.Agent(cfg, e.pool, e.tc, reg, e.gateway, registry, e.opts.Log)
	l, err := web.Listen("127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("agent tools listener: %w", err)
	}
	svc := stack.AgentService(tools, e.gateway, e.opts.Log)
	e.wg.Add(2)
	go func() { defer e.wg.Done(); _ = svc.Serve(ctx, l) }()
	go func() { defer e.wg.Done(); tools.RunReaper(ctx, stack.ReapEvery) }()
	return e.proxyAgent(ctx, "http://"+l.Addr().String())
}

// proxyAgent puts the agents' fault proxy in front of the agent tools at
// upstream and sets e.agentURL to it.
func (e *env) proxyAgent(ctx context.Context, upstream string) error {
	p, err := chaos.New(upstream, e.opts.Agent,
		chaos.WithRand(mrand.New(mrand.NewPCG(e.opts.Seed, 0xa9e))))
	if err != nil {
		return fmt.Errorf("%s proxy: %w", upstreamAgent, err)
	}
	e.proxies[upstreamAgent] = p
	e.agentURL, err = e.serveHandler(ctx, p)
	return err
}
