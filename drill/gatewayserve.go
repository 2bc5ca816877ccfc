package drill

import (
	"context"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/internal/stack"
)

// gatewayListeners are the gateway's two: the public one Twilio and the
// payment API call, and the admin one the drill's operator uses.
type gatewayListeners struct{ public, admin net.Listener }

// startGateway serves the gateway in process, talking to the APIs and
// Twilio through their fault proxies (proxied, by upstream), and adds
// its URLs to vars, the workers' environment.
func (e *env) startGateway(ctx context.Context, l gatewayListeners, vars map[string]string, proxied map[string]string) error {
	gatewayVars(e, vars, proxied)
	var gwReg *prometheus.Registry
	calendarMetrics, paymentsMetrics := e.apis[upstreamCalendar][0].metrics, e.apis[upstreamPayments][0].metrics
	tenants, err := stack.LoadTenants(ctx, e.cfg, e.pool, e.opts.Log)
	if err != nil {
		return err
	}
	e.gateway, gwReg = stack.Gateway(e.cfg, e.pool, e.tc, tenants, e.opts.Log, calendarMetrics, paymentsMetrics)
	e.gatherers = []prometheus.Gatherer{gwReg, calendarMetrics, paymentsMetrics}
	svc, admin := stack.GatewayService(e.gateway, gwReg, e.opts.Log), stack.AdminService(e.gateway, gwReg, e.opts.Log)
	e.wg.Add(3)
	go func() { defer e.wg.Done(); _ = svc.Serve(ctx, l.public) }()
	go func() { defer e.wg.Done(); _ = admin.Serve(ctx, l.admin) }()
	go func() { defer e.wg.Done(); e.gateway.RunRelay(ctx, 2*time.Second) }()
	return e.startAgent(ctx, gwReg, tenants, proxied[upstreamCalendar])
}

// gatewayVars adds the gateway's URLs to vars, the environment of the
// workers (and of the gateway replicas): the URL Twilio calls, against
// which the gateway verifies signatures (its own, or its load
// balancer's), and the downstreams through their fault proxies.
func gatewayVars(e *env, vars map[string]string, proxied map[string]string) {
	e.cfg.PublicBaseURL = e.gwURL
	vars["PUBLIC_BASE_URL"] = e.gwURL
	vars["CALENDAR_URL"], vars["PAYMENTS_URL"], vars["TWILIO_API_URL"] = proxied[upstreamCalendar], proxied[upstreamPayments], proxied[upstreamTwilio]
}
