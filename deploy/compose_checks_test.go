package deploy

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
)

// problems collects check failures, so a check can be run against a broken
// project in TestChecksCanFail as well as against the real one.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func envOf(s types.ServiceConfig, name string) string {
	if v := s.Environment[name]; v != nil {
		return *v
	}
	return ""
}

// service returns the named service, recording a problem when it is absent.
func service(p *types.Project, name string, out *problems) (types.ServiceConfig, bool) {
	s, ok := p.Services[name]
	if !ok {
		out.addf("service %q missing", name)
	}
	return s, ok
}

func checkServices(p *types.Project) (out problems) {
	images := map[string]string{
		"postgres":             "postgres:16",
		"temporal":             "temporalio/server:1.32.",
		"temporal-admin-tools": "temporalio/admin-tools:1.32.",
		"temporal-namespace":   "temporalio/admin-tools:1.32.",
		"temporal-ui":          "temporalio/ui:2.",
	}
	for name, prefix := range images {
		if s, ok := service(p, name, &out); ok && !strings.HasPrefix(s.Image, prefix) {
			out.addf("%s: image %q, want %s*", name, s.Image, prefix)
		}
	}
	for name, s := range p.Services {
		if strings.Contains(s.Image, "temporalio/auto-setup") {
			out.addf("%s: temporalio/auto-setup is deprecated", name)
		}
	}
	// One image, built once: exactly one service builds the repository
	// root Dockerfile, and our services run that image by name without
	// trying to pull it; each names its binary (cmd/<name>) as entrypoint.
	abs, _ := filepath.Abs(repoRoot)
	var builders []string
	var image string
	for name, s := range p.Services {
		if s.Build != nil {
			builders = append(builders, name)
			image = s.Image
			if filepath.Clean(s.Build.Context) != abs {
				out.addf("%s: must build the repository root Dockerfile", name)
			}
		}
	}
	if len(builders) != 1 || image == "" {
		out.addf("exactly one service must build the image (and name it), got %v", builders)
	}
	for _, name := range ourServices {
		s, ok := service(p, name, &out)
		if !ok {
			continue
		}
		if s.Build == nil && (s.Image != image || s.PullPolicy != types.PullPolicyNever) {
			out.addf("%s: must run the built image %q with pull_policy never, got %q (%q)", name, image, s.Image, s.PullPolicy)
		}
		if want := "/usr/local/bin/" + name; len(s.Entrypoint) != 1 || s.Entrypoint[0] != want {
			out.addf("%s: entrypoint %q, want [%q]", name, s.Entrypoint, want)
		}
	}
	return out
}

func checkPorts(p *types.Project) (out problems) {
	want := map[string]uint32{"gateway": 8080, "calendar": 8081, "payments": 8082, "temporal-ui": 8233, "temporal": 7233}
	for name, port := range want {
		s, ok := service(p, name, &out)
		if !ok {
			continue
		}
		published := slices.ContainsFunc(s.Ports, func(pc types.ServicePortConfig) bool {
			// Loopback only: the stack is reached through a proxy, not directly.
			return pc.Published == fmt.Sprint(port) && pc.HostIP == "127.0.0.1"
		})
		if !published {
			out.addf("%s: port %d not published on 127.0.0.1 (ports: %+v)", name, port, s.Ports)
		}
	}
	return out
}

func checkWiring(p *types.Project) (out problems) {
	pg, _ := service(p, "postgres", &out)
	user, pass := envOf(pg, "POSTGRES_USER"), envOf(pg, "POSTGRES_PASSWORD")
	listen := map[string]string{"gateway": "GATEWAY_LISTEN=0.0.0.0:8080", "calendar": "CALENDAR_LISTEN=0.0.0.0:8081", "payments": "PAYMENTS_LISTEN=0.0.0.0:8082"}
	for _, name := range ourServices {
		s, ok := service(p, name, &out)
		if !ok {
			continue
		}
		u, err := url.Parse(envOf(s, "DATABASE_URL"))
		switch {
		case err != nil || u.Hostname() != "postgres" || u.Path != "/bookonce":
			out.addf("%s: DATABASE_URL %q must point at postgres/bookonce", name, envOf(s, "DATABASE_URL"))
		case u.User.Username() != user || func() bool { pw, _ := u.User.Password(); return pw != pass }():
			out.addf("%s: DATABASE_URL credentials differ from the postgres service's", name)
		}
		host, port, _ := net.SplitHostPort(envOf(s, "TEMPORAL_ADDRESS"))
		switch {
		case !slices.Contains(temporalClients, name) && s.Environment["TEMPORAL_ADDRESS"] != nil:
			out.addf("%s: never talks to Temporal, so it must not be given TEMPORAL_ADDRESS", name)
		case slices.Contains(temporalClients, name) && (host != "temporal" || port != "7233"):
			out.addf("%s: TEMPORAL_ADDRESS %q, want temporal:7233", name, envOf(s, "TEMPORAL_ADDRESS"))
		}
		for k, want := range map[string]string{"CALENDAR_URL": "http://calendar:8081", "PAYMENTS_URL": "http://payments:8082", "LOG_FORMAT": "json"} {
			if got := envOf(s, k); got != "" && got != want {
				out.addf("%s: %s=%q, want %q", name, k, got, want)
			}
		}
		if kv, ok := listen[name]; ok {
			k, want, _ := strings.Cut(kv, "=")
			if envOf(s, k) != want {
				out.addf("%s: %s=%q, want %q (reachable from other containers)", name, k, envOf(s, k), want)
			}
		}
	}
	// Temporal server: the env names its embedded config template reads.
	if s, ok := service(p, "temporal", &out); ok {
		for k, want := range map[string]string{
			"DB": "postgres12", "POSTGRES_SEEDS": "postgres", "POSTGRES_USER": user, "POSTGRES_PWD": pass,
			"DBNAME": "temporal", "VISIBILITY_DBNAME": "temporal_visibility", "BIND_ON_IP": "0.0.0.0",
		} {
			if envOf(s, k) != want {
				out.addf("temporal: %s=%q, want %q", k, envOf(s, k), want)
			}
		}
	}
	return out
}

// checkEnvNames: every variable our services are given has a row in the
// configuration table (docs/configuration.md).
func checkEnvNames(p *types.Project) (out problems) {
	for _, name := range ourServices {
		if s, ok := service(p, name, &out); ok {
			for k := range s.Environment {
				if !documented(k) {
					out.addf("%s: env %s is not in docs/configuration.md's table", name, k)
				}
			}
		}
	}
	return out
}

// composeOmits are variables the table says a service reads that compose
// deliberately leaves unset: an escape hatch that must never reach
// production, the Temporal TLS settings (compose runs its own Temporal
// in plaintext on the compose network; see docs/deploy.md), and what only
// the Temporal Worker Controller sets in Kubernetes.
var composeOmits = []string{"BOOKONCE_ALLOW_DEV_SECRETS", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH",
	"TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_SERVER_NAME", "TEMPORAL_API_KEY", "TEMPORAL_PROFILE", "TEMPORAL_CONFIG_FILE",
	"TEMPORAL_WORKER_BUILD_ID", "TEMPORAL_DEPLOYMENT_NAME"}

// checkEnvComplete: every variable the table says a service reads is
// passed to it (a tunable as ${VAR:-default}), so setting it in .env
// takes effect instead of being silently dropped.
func checkEnvComplete(p *types.Project) (out problems) {
	for _, name := range ourServices {
		s, ok := service(p, name, &out)
		if !ok {
			continue
		}
		for _, k := range readBy(name) {
			if _, set := s.Environment[k]; !set && !slices.Contains(composeOmits, k) {
				out.addf("%s: reads %s (docs/configuration.md), but compose does not pass it", name, k)
			}
		}
	}
	return out
}

func checkDependsOn(p *types.Project) (out problems) {
	type dep struct{ service, on, condition string }
	want := []dep{
		{"temporal-admin-tools", "postgres", types.ServiceConditionHealthy},
		{"temporal", "postgres", types.ServiceConditionHealthy},
		{"temporal", "temporal-admin-tools", types.ServiceConditionCompletedSuccessfully},
		{"temporal-namespace", "temporal", types.ServiceConditionHealthy},
		{"temporal-ui", "temporal", types.ServiceConditionHealthy},
	}
	for _, name := range ourServices {
		want = append(want,
			dep{name, "postgres", types.ServiceConditionHealthy},
			dep{name, "tenants", types.ServiceConditionCompletedSuccessfully})
	}
	for _, name := range temporalClients {
		want = append(want,
			dep{name, "temporal", types.ServiceConditionHealthy},
			dep{name, "temporal-namespace", types.ServiceConditionCompletedSuccessfully})
	}
	// The APIs never talk to Temporal: they need not wait for it, nor stop
	// when it restarts.
	for _, name := range ourServices {
		if slices.Contains(temporalClients, name) {
			continue
		}
		if s, ok := service(p, name, &out); ok {
			for _, on := range []string{"temporal", "temporal-namespace", "temporal-admin-tools"} {
				if _, dep := s.DependsOn[on]; dep {
					out.addf("%s: must not depend on %s (it never talks to Temporal)", name, on)
				}
			}
		}
	}
	for _, d := range want {
		if s, ok := service(p, d.service, &out); ok && s.DependsOn[d.on].Condition != d.condition {
			out.addf("%s: depends_on %s must be %s, got %q", d.service, d.on, d.condition, s.DependsOn[d.on].Condition)
		}
	}
	// service_healthy waits forever on a service that has no healthcheck.
	for name, s := range p.Services {
		for on, d := range s.DependsOn {
			if t, ok := p.Services[on]; ok && d.Condition == types.ServiceConditionHealthy &&
				(t.HealthCheck == nil || t.HealthCheck.Disable || len(t.HealthCheck.Test) == 0) {
				out.addf("%s waits for %s to be healthy, but %s has no healthcheck", name, on, on)
			}
		}
	}
	return out
}

func checkTemporalSetup(p *types.Project) (out problems) {
	script := func(s types.ServiceConfig) string { return strings.Join(append(s.Entrypoint, s.Command...), " ") }
	if s, ok := service(p, "temporal-admin-tools", &out); ok {
		sh := script(s)
		if envOf(s, "SQL_PLUGIN") != "postgres12" && !strings.Contains(sh, "--plugin postgres12") {
			out.addf("temporal-admin-tools: temporal-sql-tool must use plugin postgres12")
		}
		for _, want := range []string{"temporal-sql-tool", "setup-schema", "temporal_visibility",
			"update-schema --schema-name postgresql/v12/temporal", "update-schema --schema-name postgresql/v12/visibility"} {
			if !strings.Contains(sh, want) {
				out.addf("temporal-admin-tools: script lacks %q", want)
			}
		}
	}
	if s, ok := service(p, "temporal-namespace", &out); ok {
		sh := strings.Join(strings.Fields(strings.ReplaceAll(script(s), "\\\n", " ")), " ")
		if !strings.Contains(sh, "namespace create --namespace default") {
			out.addf("temporal-namespace: does not create namespace default")
		}
		for name, typ := range map[string]string{"CustomerPhone": "Keyword", "CustomerKey": "Keyword", "CustomerMasked": "Keyword", "Channel": "Keyword",
			"BookingStatus": "Keyword", "Service": "Keyword", "SlotStart": "Datetime"} {
			if !strings.Contains(sh, "--name "+name+" --type "+typ) {
				out.addf("temporal-namespace: search attribute %s (%s) not registered", name, typ)
			}
		}
	}
	// Bind mounts (e.g. Temporal's dynamic config) must exist in the repo.
	for name, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeBind {
				if _, err := os.Stat(v.Source); err != nil {
					out.addf("%s: bind mount source %s: %v", name, v.Source, err)
				}
			}
		}
	}
	return out
}

// checkPaymentsAdmin: the payment API's /metrics has a listener of its
// own (PAYMENTS_ADMIN_LISTEN), published on the host's loopback only, and
// the gateway's ops page scrapes it there, never the public payment port.
func checkPaymentsAdmin(p *types.Project) problems {
	return checkAPIAdmin(p, "payments", "PAYMENTS_ADMIN_LISTEN", 8092, 8082)
}

// checkCalendarAdmin: the same for the calendar API (CALENDAR_ADMIN_LISTEN
// 8093; the public 8081 serves no /metrics).
func checkCalendarAdmin(p *types.Project) problems {
	return checkAPIAdmin(p, "calendar", "CALENDAR_ADMIN_LISTEN", 8093, 8081)
}

// checkAPIAdmin: the compose service name listens with the variable admin
// on 0.0.0.0:adminPort, publishes that port on the host's loopback only,
// and the gateway scrapes it there, never at publicPort.
func checkAPIAdmin(p *types.Project, name, admin string, adminPort, publicPort uint32) (out problems) {
	if svc, ok := service(p, name, &out); ok {
		if got, want := envOf(svc, admin), fmt.Sprintf("0.0.0.0:%d", adminPort); got != want {
			out.addf("%s: %s=%q, want %s (the gateway scrapes it)", name, admin, got, want)
		}
		for _, pc := range svc.Ports {
			if pc.Target == adminPort && pc.HostIP != "127.0.0.1" {
				out.addf("%s: the admin port %d is published on %q, want 127.0.0.1 only", name, adminPort, pc.HostIP)
			}
		}
	}
	if gw, ok := service(p, "gateway", &out); ok {
		scrape := strings.Split(envOf(gw, "OPS_SCRAPE_URLS"), ",")
		want, public := fmt.Sprintf("http://%s:%d/metrics", name, adminPort), fmt.Sprintf("http://%s:%d/metrics", name, publicPort)
		if !slices.Contains(scrape, want) || slices.Contains(scrape, public) {
			out.addf("gateway: OPS_SCRAPE_URLS %q must scrape the %s API's admin port (%s), not its public one", envOf(gw, "OPS_SCRAPE_URLS"), name, want)
		}
	}
	return out
}

type check struct {
	name string
	fn   func(*types.Project) problems
}

var checks = []check{
	{"services", checkServices},
	{"ports", checkPorts},
	{"wiring", checkWiring},
	{"env names", checkEnvNames},
	{"env complete", checkEnvComplete},
	{"depends_on", checkDependsOn},
	{"temporal setup", checkTemporalSetup},
	{"payments admin", checkPaymentsAdmin},
	{"calendar admin", checkCalendarAdmin},
	{"connections", checkConnections},
}
