package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/twilio"
)

// devToken is the demo tenant's API token in a testsupport database.
const devToken = "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI"

// vapiSecret is the demo tenant's Vapi HMAC secret in every env.
const vapiSecret = "vapi-test-secret-0123456789abcdef"

// retellKey is the demo tenant's Retell API key in every env.
const retellKey = "key_retell0123456789abcdef0123"

type env struct {
	pool *pgxpool.Pool
	tc   client.Client
	cfg  config.Config
	svc  *agent.Service
	url  string // the agent listener's base URL
	// admin is the gateway's admin listener: its /metrics has the agent's.
	admin string
	// twilio receives what the outbox relay sends: what reached customers.
	twilio *twilio.FakeServer
}

// newEnv runs the real stack: PostgreSQL, Temporal in-process, a worker,
// the calendar and payment APIs on loopback, and the agent tools served
// the way the gateway serves them. calendarURL, if given, wraps the
// calendar's URL the worker uses (a fault proxy in front of it).
func newEnv(t *testing.T, calendarVia ...func(string) string) env {
	t.Helper()
	return buildEnv(t, false, calendarVia...)
}

// newTwoTenantEnv is newEnv with London Garage next to the demo tenant
// (testsupport.TwoTenants).
func newTwoTenantEnv(t *testing.T) env {
	t.Helper()
	return buildEnv(t, true)
}

func buildEnv(t *testing.T, twoTenants bool, calendarVia ...func(string) string) env {
	t.Helper()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	if twoTenants {
		cfg.APITokens = testsupport.TwoTenants(t, pool)
	}
	cfg.CalendarURL = stacktest.CalendarAPI(t, cfg, pool).URL
	cfg.PaymentsURL = stacktest.PaymentsAPI(t, cfg, pool).URL
	cfg.TaskQueue = testsupport.TaskQueue(t)
	tc := temporaltest.Temporal(t)
	wcfg := cfg
	for _, via := range calendarVia {
		wcfg.CalendarURL = via(cfg.CalendarURL)
	}
	testsupport.Worker(t, tc, cfg.TaskQueue, func(r worker.Registry) {
		stack.Register(r, stack.NewActivities(wcfg, pool, testsupport.Tenants(t, pool), tc))
	})
	// Assembled as the gateway process does: the gateway's registry and
	// duplicates counter, its health, the agent listener's own mux.
	log := stack.Logger(cfg, testsupport.LogWriter(t))
	cfg.VoicePlatformSecrets = map[string]map[string]string{"demo": {string(agent.PlatformVapi): vapiSecret, string(agent.PlatformRetell): retellKey}}
	tenants := testsupport.Tenants(t, pool)
	gw, reg := stack.Gateway(cfg, pool, tc, tenants, log)
	svc := stack.Agent(cfg, pool, tc, reg, gw, tenants, log)
	svc.Wait = 45 * time.Second // the tests wait for the saga's end, not a bound
	srv := httptest.NewServer(stack.AgentService(svc, gw, log).Mux())
	t.Cleanup(srv.Close)
	admin := httptest.NewServer(stack.AdminService(gw, reg, log).Mux())
	t.Cleanup(admin.Close)
	fake := stacktest.TwilioRelay(t, cfg, pool, log, 100*time.Millisecond)
	return env{pool: pool, tc: tc, cfg: cfg, svc: svc, url: srv.URL, admin: admin.URL, twilio: fake}
}

// bearer adds a token to every request, as an MCP client's HTTP client does.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens an MCP session with the go-sdk's own client.
func (e env) connect(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bookonce-test", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.url + agent.RouteMCP, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// call runs a tool and decodes its structured answer into out; it returns
// the tool error's text, "" when the tool succeeded.
func call(t *testing.T, s *mcp.ClientSession, name agent.ToolName, args map[string]any, out any) string {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: string(name), Arguments: args})
	require.NoError(t, err)
	if res.IsError {
		require.NotEmpty(t, res.Content)
		return res.Content[0].(*mcp.TextContent).Text
	}
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	if out != nil {
		require.NoError(t, json.Unmarshal(raw, out))
	}
	return ""
}

func (e env) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// newCustomer is a fresh number: the Temporal server is shared by the
// package and by reruns, and workflow IDs derive from the customer.
func newCustomer() string { return fmt.Sprintf("+49151%08d", rand.IntN(100000000)) }

// book runs book_appointment and requires the tool to answer want.
func book(t *testing.T, s *mcp.ClientSession, args map[string]any, want agent.Status) agent.BookingAnswer {
	t.Helper()
	var a agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, args, &a))
	require.Equal(t, want, a.Status, a.Message)
	return a
}
