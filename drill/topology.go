package drill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Topology is how many processes of each kind the drill runs.
type Topology string

// The drill's topologies.
const (
	// TopologySingle is one gateway (in the drill's process, never
	// killed), Options.Workers worker processes, one calendar and one
	// payment API process.
	TopologySingle Topology = "single"
	// TopologyScaled is two gateway processes, three workers, two calendar
	// and two payment API processes, each kind behind a round-robin
	// proxy, every one of them SIGKILLed at random.
	TopologyScaled Topology = "scaled"
)

// upstreamGateway names the gateway replicas among the drill's services.
const upstreamGateway = "gateway"

// scaledReplicas is how many processes of each service the scaled
// topology runs; scaledWorkers its worker processes.
const (
	scaledReplicas = 2
	scaledWorkers  = 3
)

// replicas is how many processes of each service run.
func (t Topology) replicas() int {
	if t == TopologyScaled {
		return scaledReplicas
	}
	return 1
}

// valid says whether t is a topology the drill knows.
func (t Topology) valid() bool { return t == TopologySingle || t == TopologyScaled }

// replicaName names replica i of n of a service: the service's own name
// when it runs alone (as the single topology always did), else name-1,
// name-2, …
func replicaName(name string, i, n int) string {
	if n == 1 {
		return name
	}
	return fmt.Sprintf("%s-%d", name, i+1)
}

// gatewayAddrs are one gateway replica's three listeners.
type gatewayAddrs struct{ public, admin, agent string }

// roundRobin is the load balancer in front of a service's replicas: each
// request goes to the next replica; a replica that refuses the
// connection (killed, not yet back) is skipped for the next, as a load
// balancer's health check would, since nothing reached it. A replica that
// dies with the request in flight answers 502, as behind a real one.
type roundRobin struct {
	targets []string // host:port
	next    atomic.Uint64
	base    http.RoundTripper
}

// newRoundRobin returns the proxy over targets (host:port each).
func newRoundRobin(targets []string) http.Handler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	rr := &roundRobin{targets: targets, base: tr}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", targets[0] // RoundTrip picks the replica
			pr.Out.Host = pr.In.Host
		},
		Transport: rr,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "bad gateway: "+err.Error(), http.StatusBadGateway)
		},
	}
}

// RoundTrip sends req to the next replica that accepts the connection.
func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
	}
	start := rr.next.Add(1) - 1
	var last error
	for i := range rr.targets {
		out := req.Clone(req.Context())
		out.URL.Host = rr.targets[(start+uint64(i))%uint64(len(rr.targets))]
		if body != nil {
			out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		resp, err := rr.base.RoundTrip(out)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
			return resp, err
		}
		last = err
	}
	return nil, fmt.Errorf("no replica accepted the connection: %w", last)
}

// front serves a round-robin proxy over targets and returns its URL.
func (e *env) front(ctx context.Context, targets []string) (string, error) {
	return e.serveHandler(ctx, newRoundRobin(targets))
}

// frontReplicas allocates the scaled topology's replica addresses (the
// calendar and payment API replicas' admin listeners included) and serves a
// round-robin proxy in front of each service: the calendar and payment
// APIs (the fault proxies' upstreams), and the gateways' public, admin
// and agent listeners. It returns the fault proxies' upstreams.
func (e *env) frontReplicas(ctx context.Context) (map[string]string, error) {
	n := e.opts.Topology.replicas()
	addrs, err := freeAddrs(7 * n)
	if err != nil {
		return nil, err
	}
	e.replicaAddrs = map[string][]string{upstreamCalendar: addrs[:n], upstreamPayments: addrs[n : 2*n]}
	e.adminAddrs = map[string][]string{upstreamPayments: addrs[5*n : 6*n], upstreamCalendar: addrs[6*n:]}
	var public, admin, agent []string
	for i := range n {
		g := gatewayAddrs{public: addrs[2*n+i], admin: addrs[3*n+i], agent: addrs[4*n+i]}
		e.gatewayAddrs = append(e.gatewayAddrs, g)
		public, admin, agent = append(public, g.public), append(admin, g.admin), append(agent, g.agent)
	}
	ups := map[string]string{upstreamTwilio: e.twilio.URL()}
	for _, f := range []struct {
		into    *string
		targets []string
	}{{&e.gwURL, public}, {&e.staffURL, admin}, {&e.agentFront, agent}} {
		if *f.into, err = e.front(ctx, f.targets); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{upstreamCalendar, upstreamPayments} {
		if ups[name], err = e.front(ctx, e.replicaAddrs[name]); err != nil {
			return nil, err
		}
	}
	ups[upstreamWebhooks] = e.gwURL
	return ups, nil
}

// startGatewayReplicas starts the scaled topology's gateway processes
// (stack.RunGateway, as cmd/gateway) and the agents' fault proxy in front
// of their agent listeners. Every replica's ops page scrapes every API
// and gateway replica, its own included (the page counts each registry
// once).
func (e *env) startGatewayReplicas(ctx context.Context, vars map[string]string, proxied map[string]string) error {
	gatewayVars(e, vars, proxied)
	var scrape []string
	for _, name := range []string{upstreamCalendar, upstreamPayments} {
		for i := range e.replicaAddrs[name] {
			scrape = append(scrape, "http://"+e.metricsAddr(name, i)+"/metrics")
		}
	}
	for _, g := range e.gatewayAddrs {
		scrape = append(scrape, "http://"+g.admin+"/metrics")
	}
	base := envList(vars)
	for i, g := range e.gatewayAddrs {
		env := append(append([]string(nil), base...), "GATEWAY_LISTEN="+g.public, "ADMIN_LISTEN="+g.admin, "AGENT_LISTEN="+g.agent,
			"OPS_SCRAPE_URLS="+strings.Join(scrape, ","))
		svc := newService(replicaName(upstreamGateway, i, len(e.gatewayAddrs)), roleGateway, g.admin, env, e.opts, httpReady(g.admin))
		svc.metrics = newRemoteGatherer(g.admin)
		e.apis[upstreamGateway] = append(e.apis[upstreamGateway], svc)
		e.stops = append(e.stops, svc.close)
		if err := svc.start(ctx); err != nil {
			return err
		}
	}
	for _, name := range []string{upstreamGateway, upstreamCalendar, upstreamPayments} {
		for _, svc := range e.apis[name] {
			e.gatherers = append(e.gatherers, svc.metrics)
		}
	}
	return e.proxyAgent(ctx, e.agentFront)
}

// killTargets are the processes the API killer draws from, in a fixed
// order (the single topology's: calendar, payments).
func killTargets(apis map[string][]*service) []*service {
	var out []*service
	for _, name := range []string{upstreamCalendar, upstreamPayments, upstreamGateway} {
		out = append(out, apis[name]...)
	}
	return out
}

// TopologyReport is the topology a drill ran, in its report.
type TopologyReport struct {
	Name Topology `json:"name"`
	// Gateways are gateway processes (the single topology's one runs in
	// the drill's process); the others count processes running at once.
	Gateways  int `json:"gateways"`
	Workers   int `json:"workers"`
	Calendars int `json:"calendar_apis"`
	Payments  int `json:"payment_apis"`
}

func (t TopologyReport) String() string {
	gw := fmt.Sprintf("%d gateways", t.Gateways)
	if t.Name == TopologySingle {
		gw = "1 gateway in the drill's process"
	}
	return fmt.Sprintf("%s (%s, %d workers, %d calendar and %d payment API processes)", t.Name, gw, t.Workers, t.Calendars, t.Payments)
}

// topologyReport describes the topology e runs.
func (e *env) topologyReport() TopologyReport {
	return TopologyReport{Name: e.opts.Topology, Gateways: max(1, len(e.apis[upstreamGateway])), Workers: e.opts.Workers,
		Calendars: len(e.apis[upstreamCalendar]), Payments: len(e.apis[upstreamPayments])}
}

// Throughput is how fast the stack settled the drill's bookings: from the
// first webhook until every booking had ended (confirmed, rejected or in
// review), before the changes and the report. It compares topologies run
// on the same machine; faults, crashes and the outage are in it.
type Throughput struct {
	Bookings  int     `json:"bookings"`
	Seconds   float64 `json:"seconds"`
	PerMinute float64 `json:"bookings_per_minute"`
}

func newThroughput(bookings int, first, settled time.Time) Throughput {
	secs := settled.Sub(first).Seconds()
	t := Throughput{Bookings: bookings, Seconds: round2(secs)}
	if secs > 0 {
		t.PerMinute = round2(float64(bookings) / secs * 60)
	}
	return t
}

func (t Throughput) String() string {
	return fmt.Sprintf("%.1f bookings/min (%d bookings settled %.0fs after the first webhook)", t.PerMinute, t.Bookings, t.Seconds)
}
