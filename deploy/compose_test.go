package deploy

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/servicetoken"
)

// repoRoot is where Dockerfile, docker-compose.yml and docs/ live;
// `go test` runs with the package directory as working directory.
const repoRoot = ".."

// ourServices are the services that run our image, one binary each.
var ourServices = []string{"worker", "gateway", "calendar", "payments"}

// temporalClients are those of ourServices that talk to Temporal.
var temporalClients = []string{"worker", "gateway"}

// requiredSecrets are the variables compose demands (${VAR:?}), with
// values of the kind an operator sets; later entries of env override them.
var requiredSecrets = []string{
	"POSTGRES_PASSWORD=pgsecret",
	"BOOKONCE_SERVICE_KEY=" + operatorSeed,
	"BOOKONCE_SERVICE_PUBLIC_KEYS=" + operatorPublicKey(),
	"TWILIO_AUTH_TOKEN=twiliosecret",
	"STRIPE_WEBHOOK_SECRET=whsec_0123456789abcdef",
	"BOOKONCE_CUSTOMER_ID_KEY=0123456789abcdef0123456789abcdef",
	"OPS_SESSION_SECRET=0123456789abcdef0123456789abcdef",
	"OPERATION_ID_SECRET=fedcba9876543210fedcba9876543210",
	"TENANTS_FILE=./deploy/tenants.demo.yaml",
}

// operatorSeed is a service key as `starter service-key` makes one (hex
// here), not the published development key.
var operatorSeed = strings.Repeat("5a", 32)

// operatorPublicKey is operatorSeed's public key.
func operatorPublicKey() string {
	seed, err := servicetoken.ParseSeed(operatorSeed)
	if err != nil {
		panic(err)
	}
	return publicKeyOf(seed)
}

// loadProject parses docker-compose.yml the way `docker compose` would, but
// with exactly the required secrets and env as the interpolation
// environment (no OS env, no .env file), so the ${VAR:-default} fallbacks
// are what gets tested.
func loadProject(t *testing.T, env ...string) *types.Project {
	t.Helper()
	p, err := loadProjectWith(append(slices.Clone(requiredSecrets), env...))
	require.NoError(t, err, "docker-compose.yml does not load")
	return p
}

// loadProjectWith loads docker-compose.yml with exactly env.
func loadProjectWith(env []string) (*types.Project, error) {
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(repoRoot, "docker-compose.yml")},
		cli.WithWorkingDirectory(repoRoot),
		cli.WithEnv(env),
	)
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(context.Background())
}

// TestComposeRequiresSecrets: without a secret, compose refuses to start
// and its message names the variable (there are no dev secret fallbacks).
func TestComposeRequiresSecrets(t *testing.T) {
	for i, kv := range requiredSecrets {
		name, _, _ := strings.Cut(kv, "=")
		t.Run(name, func(t *testing.T) {
			env := slices.Delete(slices.Clone(requiredSecrets), i, i+1)
			_, err := loadProjectWith(env)
			require.Error(t, err)
			require.Contains(t, err.Error(), name)
		})
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	require.NoError(t, err)
	for _, dev := range []string{"bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI", "dev-twilio-auth-token", "whsec_compose_local_only", customerid.DevSecret, "POSTGRES_PASSWORD:-"} {
		require.NotContains(t, string(raw), dev, "docker-compose.yml must not fall back on a development secret")
	}
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
		{"wiring", setEnv("calendar", "TEMPORAL_ADDRESS", "temporal:7233")},
		{"services", edit("calendar", func(s *types.ServiceConfig) { s.Build = &types.BuildConfig{Context: "."} })},
		{"services", edit("payments", func(s *types.ServiceConfig) { s.Image = "bookonce:other" })},
		{"services", edit("worker", func(s *types.ServiceConfig) { s.Entrypoint = nil })},
		{"env names", setEnv("gateway", "TWILIO_TOKEN", "x")},
		{"env complete", edit("worker", func(s *types.ServiceConfig) { delete(s.Environment, "TWILIO_FROM") })},
		{"env complete", edit("calendar", func(s *types.ServiceConfig) { delete(s.Environment, "HOLD_TTL") })},
		{"depends_on", edit("gateway", func(s *types.ServiceConfig) { delete(s.DependsOn, "temporal-namespace") })},
		{"depends_on", edit("payments", func(s *types.ServiceConfig) {
			s.DependsOn["temporal"] = types.ServiceDependency{Condition: types.ServiceConditionHealthy}
		})},
		{"depends_on", edit("postgres", func(s *types.ServiceConfig) { s.HealthCheck = nil })},
		{"temporal setup", edit("temporal-namespace", func(s *types.ServiceConfig) { s.Command = nil })},
		{"payments admin", edit("payments", func(s *types.ServiceConfig) { delete(s.Environment, "PAYMENTS_ADMIN_LISTEN") })},
		{"payments admin", edit("payments", func(s *types.ServiceConfig) {
			s.Ports = append(s.Ports, types.ServicePortConfig{Target: 8092, Published: "8092"}) // every interface
		})},
		{"payments admin", setEnv("gateway", "OPS_SCRAPE_URLS", "http://calendar:8093/metrics,http://payments:8082/metrics,http://worker:8083/metrics")},
		{"calendar admin", edit("calendar", func(s *types.ServiceConfig) { delete(s.Environment, "CALENDAR_ADMIN_LISTEN") })},
		{"calendar admin", edit("calendar", func(s *types.ServiceConfig) {
			s.Ports = append(s.Ports, types.ServicePortConfig{Target: 8093, Published: "8093"}) // every interface
		})},
		{"calendar admin", setEnv("gateway", "OPS_SCRAPE_URLS", "http://calendar:8081/metrics,http://payments:8092/metrics,http://worker:8083/metrics")},
		{"connections", edit("postgres", func(s *types.ServiceConfig) { s.Command = nil })}, // PostgreSQL's 100
		{"connections", setEnv("temporal", "SQL_MAX_CONNS", "50")},
		{"connections", setEnv("worker", "DATABASE_URL", "postgres://bookonce:pgsecret@postgres:5432/bookonce?pool_max_conns=200")},
	}
	for _, tc := range cases {
		p := loadProject(t)
		tc.mutate(p)
		i := slices.IndexFunc(checks, func(c check) bool { return c.name == tc.check })
		require.GreaterOrEqual(t, i, 0, "no check %q", tc.check)
		require.NotEmpty(t, checks[i].fn(p), "check %q missed a broken project", tc.check)
	}
}

// TestInterpolation: secrets and tunables come from the environment;
// tunables fall back on the configuration table's defaults.
func TestInterpolation(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		want map[string]map[string]string // service -> variable -> value
	}{
		{"defaults", nil, map[string]map[string]string{
			"gateway": {
				"TWILIO_AUTH_TOKEN":     "twiliosecret",
				"TWILIO_ACCOUNT_SID":    "ACdev00000000000000000000000000000",
				"STRIPE_WEBHOOK_SECRET": "whsec_0123456789abcdef",
				"BOOKONCE_TIMEZONE":     "Europe/Berlin",
				"PUBLIC_BASE_URL":       "http://127.0.0.1:8080",
				"LOG_LEVEL":             "info",
			},
			"worker":   {"BOOKONCE_SERVICE_KEY": operatorSeed, "TWILIO_FROM": "+4930123456", "LLM_BASE_URL": ""},
			"calendar": {"IDEMPOTENCY_TTL": "72h", "HOLD_TTL": "10m", "BOOKONCE_SERVICE_PUBLIC_KEYS": operatorPublicKey()},
			"payments": {"IDEMPOTENCY_KEYS_PER_MINUTE": "6000", "STRIPE_WEBHOOK_SECRET": "whsec_0123456789abcdef"},
		}},
		{"overrides", []string{"TWILIO_AUTH_TOKEN=s3cret", "POSTGRES_PASSWORD=pw", "LOG_LEVEL=debug", "TWILIO_FROM=+4940999"}, map[string]map[string]string{
			"gateway": {
				"TWILIO_AUTH_TOKEN": "s3cret",
				"DATABASE_URL":      "postgres://bookonce:pw@postgres:5432/bookonce?sslmode=disable",
				"LOG_LEVEL":         "debug",
			},
			"worker": {"TWILIO_FROM": "+4940999", "TWILIO_AUTH_TOKEN": "s3cret"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := loadProject(t, tc.env...)
			for svc, want := range tc.want {
				for k, v := range want {
					require.Equal(t, v, envOf(p.Services[svc], k), "%s: %s", svc, k)
				}
			}
		})
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
		{"golang builder stage pinned to a patch release", `(?mi)^FROM\s+golang:1\.27\.\d+\S*\s+AS\s+\w+`},
		{"pinned toolchain", `GOTOOLCHAIN=go1\.27\.3`},
		{"static binaries", `CGO_ENABLED=0`},
		{"module download layer before the source copy", `(?s)go mod download.*COPY\s+\.\s+\.`},
		{"builds the service binaries", `go build[^\n]*-trimpath[^\n]*\\\n\s*\./cmd/worker \./cmd/gateway \./cmd/calendar \./cmd/payments \./cmd/starter\n`},
		{"an entrypoint", `(?m)^ENTRYPOINT\s+\["/usr/local/bin/\w+"\]`},
		{"a numeric non-root user (runAsNonRoot can verify it)", `(?m)^USER\s+[1-9]\d*(:\d+)?\s*$`},
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
	// The embedded Temporal server (cmd/dev, cmd/devserver, the drill)
	// is minutes of compile time that production never runs.
	require.NotRegexp(t, `\./cmd/(\.\.\.|dev|devserver|chaos)\b`, df, "the image builds only the service binaries")
}

// TestComposeServicesPassSecretsCheck: our services listen on 0.0.0.0, so
// each checks the secrets it uses (stack.*Secrets) for development values;
// with the secrets an operator sets they all start, and a development
// value stops exactly the services that use it.
func TestComposeServicesPassSecretsCheck(t *testing.T) {
	uses := map[string][]config.Secret{"worker": config.WorkerSecrets, "gateway": config.GatewaySecrets,
		"calendar": config.CalendarSecrets, "payments": config.PaymentsSecrets}
	cases := []struct {
		name string
		env  []string
		bad  config.Secret // "": every service starts
	}{
		{"operator secrets", nil, ""},
		{"dev service key", []string{"BOOKONCE_SERVICE_KEY=" + hex.EncodeToString(servicetoken.DevSeed[:])}, config.SecretServiceKey},
		{"dev service public key", []string{"BOOKONCE_SERVICE_PUBLIC_KEYS=" + operatorPublicKey() + "," + devPublicKey()}, config.SecretServicePublicKeys},
		{"dev twilio token", []string{"TWILIO_AUTH_TOKEN=" + config.DevTwilioAuthToken}, config.SecretTwilio},
		{"compose's old webhook secret", []string{"STRIPE_WEBHOOK_SECRET=" + config.DevStripeWebhookSecret}, config.SecretStripeWebhook},
		{"compose's old webhook secret for a shop", []string{"STRIPE_WEBHOOK_SECRETS=demo=" + config.DevStripeWebhookSecret}, config.SecretStripeWebhooks},
		{"dev customer key", []string{"BOOKONCE_CUSTOMER_ID_KEY=" + customerid.DevSecret}, config.SecretCustomerID},
		{"dev ops session secret", []string{"OPS_SESSION_SECRET=" + config.DevOpsSessionSecret}, config.SecretOpsSession},
		{"short operation ID secret", []string{"OPERATION_ID_SECRET=abc"}, config.SecretOperationID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := loadProject(t, tc.env...)
			for _, name := range ourServices {
				env := p.Services[name].Environment
				cfg, err := config.Load(func(k string) (string, bool) {
					if v := env[k]; v != nil {
						return *v, true
					}
					return "", false
				})
				require.NoError(t, err, name)
				err = cfg.CheckSecrets(uses[name]...)
				if tc.bad != "" && slices.Contains(uses[name], tc.bad) {
					require.ErrorContains(t, err, string(tc.bad), name)
				} else {
					require.NoError(t, err, name)
				}
			}
		})
	}
}

// devPublicKey is the public key of the published development seed.
func devPublicKey() string { return publicKeyOf(servicetoken.DevSeed[:]) }

// publicKeyOf is the public key of seed as the APIs are given it.
func publicKeyOf(seed []byte) string {
	m, err := servicetoken.NewMinter(seed)
	if err != nil {
		panic(err)
	}
	return servicetoken.EncodeKey(m.PublicKey())
}
