package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/internal/telemetry"
)

// LayerAgent is the duplicates_blocked layer of the agent tools: a booking
// asked for again under another operation (a re-plan, a second agent, the
// same wish over WhatsApp) that joined the booking already made.
const LayerAgent = "agent"

// Metrics counts tool calls and the duplicates they did not book.
type Metrics struct {
	calls      *prometheus.CounterVec
	duplicates *prometheus.CounterVec
}

// NewMetrics registers bookonce_agent_tool_calls_total on reg and counts
// duplicates on the process's bookonce_duplicates_blocked_total (the
// gateway's, which reg already carries), with the layer "agent".
func NewMetrics(reg prometheus.Registerer, duplicates *prometheus.CounterVec) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_agent_tool_calls_total",
			Help: "Agent tool calls (MCP and HTTP) by tool and outcome (a booking status, ok, refused or error).",
		}, []string{"tool", "outcome"}),
		duplicates: duplicates,
	}
	if m.duplicates == nil {
		m.duplicates = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: telemetry.DuplicatesBlockedName, Help: telemetry.DuplicatesBlockedHelp,
		}, []string{"layer", "tenant", "route"})
		reg.MustRegister(m.duplicates)
	}
	reg.MustRegister(m.calls)
	return m
}

// Calls returns the tool-call counter (for tests and dashboards).
func (m *Metrics) Calls() *prometheus.CounterVec { return m.calls }

// Duplicates returns the duplicates counter the tools count on.
func (m *Metrics) Duplicates() *prometheus.CounterVec { return m.duplicates }

func (m *Metrics) call(tool ToolName, outcome string) {
	if m != nil {
		m.calls.WithLabelValues(string(tool), outcome).Inc()
	}
}

func (m *Metrics) duplicate(tenant string) {
	if m != nil {
		m.duplicates.WithLabelValues(LayerAgent, tenant, string(ToolBookAppointment)).Inc()
	}
}
