package deploy

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"
)

// repoRoot is where Dockerfile, docker-compose.yml and README.md live;
// `go test` runs with the package directory as working directory.
const repoRoot = ".."

// ourServices are the services built from our Dockerfile.
var ourServices = []string{"worker", "gateway", "calendar", "payments"}

// knownEnv is the configuration table (README.md): the only variables our
// services may be given. A typo here would be a silently ignored setting.
var knownEnv = []string{
	"BOOKONCE_DATA_DIR", "DATABASE_URL",
	"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_TASK_QUEUE", "TEMPORAL_UI_PORT",
	"GATEWAY_LISTEN", "CALENDAR_LISTEN", "PAYMENTS_LISTEN", "WORKER_LISTEN", "OPS_SCRAPE_URLS",
	"CALENDAR_URL", "PAYMENTS_URL", "PUBLIC_BASE_URL",
	"BOOKONCE_API_TOKENS", "TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN",
	"BOOKONCE_TIMEZONE", "IDEMPOTENCY_TTL", "HOLD_TTL", "LOG_FORMAT", "LOG_LEVEL",
}

// loadProject parses docker-compose.yml the way `docker compose` would, but
// with exactly env as the interpolation environment (no OS env, no .env file),
// so the ${VAR:-default} fallbacks are what gets tested.
func loadProject(t *testing.T, env ...string) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(repoRoot, "docker-compose.yml")},
		cli.WithWorkingDirectory(repoRoot),
		cli.WithEnv(env),
	)
	require.NoError(t, err)
	p, err := opts.LoadProject(context.Background())
	require.NoError(t, err, "docker-compose.yml does not load")
	return p
}

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
	for _, name := range ourServices {
		s, ok := service(p, name, &out)
		if !ok {
			continue
		}
		// One image for all; the binary (cmd/<name>) is picked by command.
		abs, _ := filepath.Abs(repoRoot)
		if s.Build == nil || filepath.Clean(s.Build.Context) != abs {
			out.addf("%s: must build the repository root Dockerfile", name)
		}
		if len(s.Command) == 0 || s.Command[0] != name {
			out.addf("%s: command %q, want binary %q", name, s.Command, name)
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
		if host, port, _ := net.SplitHostPort(envOf(s, "TEMPORAL_ADDRESS")); host != "temporal" || port != "7233" {
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

func checkEnvNames(p *types.Project) (out problems) {
	for _, name := range ourServices {
		if s, ok := service(p, name, &out); ok {
			for k := range s.Environment {
				if !slices.Contains(knownEnv, k) {
					out.addf("%s: env %s is not a documented configuration variable", name, k)
				}
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
			dep{name, "temporal", types.ServiceConditionHealthy},
			dep{name, "temporal-namespace", types.ServiceConditionCompletedSuccessfully})
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
		for name, typ := range map[string]string{"CustomerPhone": "Keyword", "Channel": "Keyword",
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

type check struct {
	name string
	fn   func(*types.Project) problems
}

var checks = []check{
	{"services", checkServices},
	{"ports", checkPorts},
	{"wiring", checkWiring},
	{"env names", checkEnvNames},
	{"depends_on", checkDependsOn},
	{"temporal setup", checkTemporalSetup},
}

func TestCompose(t *testing.T) {
	p := loadProject(t)
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			ps := c.fn(p)
			require.Emptyf(t, ps, "\n%s", strings.Join(ps, "\n"))
		})
	}
}

// TestChecksCanFail breaks a loaded project in one way per case and requires
// the matching check to notice, so a green TestCompose means something.
func TestChecksCanFail(t *testing.T) {
	edit := func(name string, f func(*types.ServiceConfig)) func(*types.Project) {
		return func(p *types.Project) { s := p.Services[name]; f(&s); p.Services[name] = s }
	}
	setEnv := func(name, k, v string) func(*types.Project) {
		return edit(name, func(s *types.ServiceConfig) {
			if s.Environment == nil {
				s.Environment = types.MappingWithEquals{}
			}
			s.Environment[k] = &v
		})
	}
	cases := []struct {
		check  string
		mutate func(*types.Project)
	}{
		{"services", func(p *types.Project) { delete(p.Services, "gateway") }},
		{"services", edit("temporal", func(s *types.ServiceConfig) { s.Image = "temporalio/auto-setup:1.32.2" })},
		{"ports", edit("calendar", func(s *types.ServiceConfig) { s.Ports = nil })},
		{"wiring", setEnv("worker", "TEMPORAL_ADDRESS", "127.0.0.1:7233")},
		{"wiring", setEnv("payments", "DATABASE_URL", "postgres://bookonce:bookonce@localhost:5432/bookonce")},
		{"env names", setEnv("gateway", "TWILIO_TOKEN", "x")},
		{"depends_on", edit("gateway", func(s *types.ServiceConfig) { delete(s.DependsOn, "temporal-namespace") })},
		{"depends_on", edit("postgres", func(s *types.ServiceConfig) { s.HealthCheck = nil })},
		{"temporal setup", edit("temporal-namespace", func(s *types.ServiceConfig) { s.Command = nil })},
	}
	for _, tc := range cases {
		p := loadProject(t)
		tc.mutate(p)
		i := slices.IndexFunc(checks, func(c check) bool { return c.name == tc.check })
		require.GreaterOrEqual(t, i, 0, "no check %q", tc.check)
		require.NotEmpty(t, checks[i].fn(p), "check %q missed a broken project", tc.check)
	}
}

// TestInterpolation: secrets and tunables come from the environment, with the
// dev defaults from the configuration table when it is empty.
func TestInterpolation(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		want map[string]string // on gateway
	}{
		{"defaults", nil, map[string]string{
			"TWILIO_AUTH_TOKEN":   "dev-twilio-auth-token",
			"TWILIO_ACCOUNT_SID":  "ACdev00000000000000000000000000000",
			"BOOKONCE_API_TOKENS": "demo:dev-token",
			"BOOKONCE_TIMEZONE":   "Europe/Berlin",
			"PUBLIC_BASE_URL":     "http://127.0.0.1:8080",
			"IDEMPOTENCY_TTL":     "72h",
			"HOLD_TTL":            "10m",
			"LOG_LEVEL":           "info",
		}},
		{"overrides", []string{"TWILIO_AUTH_TOKEN=s3cret", "POSTGRES_PASSWORD=pw", "LOG_LEVEL=debug"}, map[string]string{
			"TWILIO_AUTH_TOKEN": "s3cret",
			"DATABASE_URL":      "postgres://bookonce:pw@postgres:5432/bookonce?sslmode=disable",
			"LOG_LEVEL":         "debug",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gw := loadProject(t, tc.env...).Services["gateway"]
			for k, want := range tc.want {
				require.Equal(t, want, envOf(gw, k), k)
			}
		})
	}
}

// readmeEnvNames returns the variable names in the first cell of markdown
// table rows, e.g. "| `HOLD_TTL` | 10m |".
func readmeEnvNames(markdown string) []string {
	row := regexp.MustCompile("(?m)^\\s*\\|\\s*`?([A-Z][A-Z0-9_]*[A-Z0-9])`?\\s*\\|")
	var names []string
	for _, m := range row.FindAllStringSubmatch(markdown, -1) {
		names = append(names, m[1])
	}
	return names
}

func TestReadmeEnvNames(t *testing.T) {
	cases := []struct{ md, want string }{
		{"| Variable | Default |\n|---|---|\n| `HOLD_TTL` | 10m |\n| LOG_LEVEL | info |\n", "HOLD_TTL LOG_LEVEL"},
		{"HOLD_TTL in prose | not a table\n", ""},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, strings.Join(readmeEnvNames(tc.md), " "))
	}
}

// TestReadmeDocumentsComposeEnv: what compose sets must be documented in the
// README's configuration table, so both stay in step.
func TestReadmeDocumentsComposeEnv(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if os.IsNotExist(err) {
		t.Skip("README.md absent: configuration table not checked")
	}
	require.NoError(t, err)
	documented := readmeEnvNames(string(md))
	require.NotEmpty(t, documented, "README.md has no configuration table")
	p := loadProject(t)
	for _, name := range ourServices {
		for k := range p.Services[name].Environment {
			require.Contains(t, documented, k, "%s sets %s, which README.md does not document", name, k)
		}
	}
}

func TestDockerfile(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	require.NoError(t, err, "Dockerfile missing")
	// Comments don't count: only instructions build the image.
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines = append(lines, l)
		}
	}
	df := strings.Join(lines, "\n")
	required := []struct{ what, pattern string }{
		{"golang 1.27 builder stage", `(?mi)^FROM\s+golang:1\.27\S*\s+AS\s+\w+`},
		{"pinned toolchain", `GOTOOLCHAIN=go1\.27\.3`},
		{"static binaries", `CGO_ENABLED=0`},
		{"module download layer before the source copy", `(?s)go mod download.*COPY\s+\.\s+\.`},
		{"builds every cmd", `go build[^\n]*-trimpath[^\n]*\./cmd/\.\.\.`},
	}
	if strings.Contains(df, "gcr.io/distroless/") {
		// Distroless has no zoneinfo; Europe/Berlin must be compiled in.
		required = append(required, struct{ what, pattern string }{"embedded tzdata", `go build[^\n]*-tags[= ]\S*timetzdata`})
	} else {
		required = append(required, struct{ what, pattern string }{"tzdata and CA certificates", `(?s)tzdata.*ca-certificates|ca-certificates.*tzdata`})
	}
	for _, r := range required {
		require.Regexp(t, r.pattern, df, r.what)
	}
}
