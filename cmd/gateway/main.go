// Command gateway serves the Twilio voice and WhatsApp webhooks and the
// payment provider's on GATEWAY_LISTEN (verified, recorded in the inbox,
// handed to their workflow), and the staff's review and booking APIs, ops
// page and /metrics on ADMIN_LISTEN.
package main

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/internal/web"
)

func main() {
	stack.Command("gateway", config.GatewaySecrets, func(ctx context.Context, p stack.Process) error {
		reg := stack.Registry()
		tc, err := stack.DialPatiently(ctx, p.Config, p.Log, stack.DialPatience, stack.WithMetrics(reg))
		if err != nil {
			return err
		}
		defer tc.Close()
		// The ops page shows the counters of the other processes too.
		var others []prometheus.Gatherer
		for _, u := range p.Config.OpsScrapeURLs {
			others = append(others, telemetry.Remote{URL: u})
		}
		tenants, err := stack.LoadTenants(ctx, p.Config, p.Pool, p.Log)
		if err != nil {
			return err
		}
		gw, reg := stack.GatewayOn(reg, p.Config, p.Pool, tc, tenants, p.Log, others...)
		tools := stack.Agent(p.Config, p.Pool, tc, reg, gw, tenants, p.Log)
		p.Log.Info("gateway listening", "addr", p.Config.GatewayListen, "admin_addr", p.Config.AdminListen, "agent_addr", p.Config.AgentListen)
		return stack.Serve(ctx, p.Log, map[string]web.Service{
			p.Config.GatewayListen: stack.GatewayService(gw, reg, p.Log),
			p.Config.AdminListen:   stack.AdminService(gw, reg, p.Log),
			p.Config.AgentListen:   stack.AgentService(tools, gw, reg, p.Log),
		},
			func(ctx context.Context) { gw.RunRelay(ctx, stack.RelayEvery) }, stack.RunTenants(tenants),
			func(ctx context.Context) { tools.RunReaper(ctx, stack.ReapEvery) })
	})
}
