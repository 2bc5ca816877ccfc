package stack

import (
	"crypto/hmac"
	"crypto/sha256"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/tenants"
)

// Agent builds the AI agent tools the gateway process serves on
// AGENT_LISTEN: their metrics go to the gateway's registry reg (whose
// duplicates counter gw's metrics own), so the ops page counts them too.
func Agent(cfg config.Config, pool *pgxpool.Pool, tc client.Client, reg *prometheus.Registry, gw *channels.Gateway, tenants *tenants.Registry, log *slog.Logger) *agent.Service {
	log = log.With("service", "agent")
	store := &dedup.Store{Pool: pool, Window: cfg.DedupWindow, Retention: cfg.IdempotencyTTL, Location: cfg.Timezone,
		Target: DedupTarget(tc)}
	var duplicates *prometheus.CounterVec
	if gw != nil && gw.Metrics != nil {
		duplicates = gw.Metrics.DuplicatesBlocked()
	}
	return &agent.Service{
		Pool: pool, Temporal: tc, TaskQueue: cfg.TaskQueue, Tenants: tenants.Get, Tokens: tenants.Authenticate,
		CalendarURL: cfg.CalendarURL, Dedup: store, Extractor: extractor(cfg),
		Signer:        agent.Signer{Key: agentKey(cfg), TTL: cfg.IdempotencyTTL},
		PaymentMethod: ConversationPaymentMethod(cfg), Keys: cfg.CustomerKeys(),
		PlatformSecrets: func(tenant string, p agent.Platform) (string, bool) {
			return cfg.VoicePlatformSecret(tenant, string(p))
		},
		// No Registerer: the gateway's duplicates counter has its own help
		// text, which the idempotency metrics would clash with on reg.
		// The lease outlives a tool call's decision and bounded wait, so a
		// call still running is never taken over by its own redelivery.
		Idempotency: idempotency.NewStore(pool, idempotency.Options{TTL: cfg.IdempotencyTTL, QuotaPerMinute: cfg.KeysPerMinute,
			Lease: AgentLease, Logger: log, Sealer: cfg.PayloadCodec}),
		Metrics: agent.NewMetrics(reg, duplicates), Logger: log,
	}
}

// AgentLease is how long an HTTP tool call holds its Idempotency-Key: it
// outlives a call's decision and bounded wait (agent.DefaultWait, 8 s)
// with room for a loaded machine, and is short enough that an agent's
// retries outlast a holder killed mid-call more than once in a row (the
// scaled drill kills a gateway every 15 s; each loss costs one lease).
const AgentLease = 30 * time.Second

// AgentService serves the agent tools (MCP at /mcp, HTTP function calls)
// with the gateway's health, as a public listener.
func AgentService(a *agent.Service, gw *channels.Gateway, log *slog.Logger) web.Service {
	// Internet-facing by design: no /metrics (the agent's counters are on
	// the gateway's admin listener), a bare /healthz.
	return web.Service{Name: "agent", Handler: a.Handler(gw.AuthLimiter), Health: gw.Health, Logger: log, Public: true}
}

// agentKey signs operation IDs with the secret every gateway replica
// shares (OPERATION_ID_SECRET), so an ID one replica issued is honoured by
// another.
func agentKey(cfg config.Config) []byte {
	m := hmac.New(sha256.New, []byte(cfg.OperationIDSecret))
	m.Write([]byte("bookonce agent operations"))
	return m.Sum(nil)
}
