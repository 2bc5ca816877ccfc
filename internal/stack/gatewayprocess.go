package stack

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/internal/web"
)

// RunGateway is the gateway process: the webhooks on GATEWAY_LISTEN, the
// staff's APIs, ops page and /metrics on ADMIN_LISTEN, the agent tools on
// AGENT_LISTEN, the inbox relay and the agent operations' reaper, until
// ctx ends. cmd/gateway runs it, and the chaos drill's scaled topology
// runs it in child processes it can SIGKILL.
func RunGateway(ctx context.Context, p Process) error {
	reg := Registry()
	tc, err := DialPatiently(ctx, p.Config, p.Log, DialPatience, WithMetrics(reg))
	if err != nil {
		return err
	}
	defer tc.Close()
	// The ops page shows the counters of the other processes too.
	var others []prometheus.Gatherer
	for _, u := range p.Config.OpsScrapeURLs {
		others = append(others, telemetry.ScrapeTarget(u))
	}
	tenants, err := LoadTenants(ctx, p.Config, p.Pool, p.Log)
	if err != nil {
		return err
	}
	gw, reg := GatewayOn(reg, p.Config, p.Pool, tc, tenants, p.Log, others...)
	tools := Agent(p.Config, p.Pool, tc, reg, gw, tenants, p.Log)
	p.Log.Info("gateway listening", "addr", p.Config.GatewayListen, "admin_addr", p.Config.AdminListen, "agent_addr", p.Config.AgentListen)
	return Serve(ctx, p.Log, map[string]web.Service{
		p.Config.GatewayListen: GatewayService(gw, reg, p.Log),
		p.Config.AdminListen:   AdminService(gw, reg, p.Log),
		p.Config.AgentListen:   AgentService(tools, gw, p.Log),
	},
		func(ctx context.Context) { gw.RunRelay(ctx, RelayEvery) }, RunTenants(tenants),
		func(ctx context.Context) { tools.RunReaper(ctx, ReapEvery) })
}
