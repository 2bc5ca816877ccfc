package agent

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/internal/telemetry"
)

// LayerAgent is the duplicates_blocked layer of the agent tools: a booking
// asked for again under another operation (a re-plan, a second agent, the
// same wish over WhatsApp) that joined the booking already made.
const LayerAgent = "agent"

// Metrics counts tool calls and the duplicates they did not book, and
// times the phases of a booking call.
type Metrics struct {
	calls      *prometheus.CounterVec
	duplicates *prometheus.CounterVec
	phases     *prometheus.HistogramVec
}

// Phases of a book_appointment call (bookonce_agent_book_phase_seconds):
// where a voice agent's turn goes.
const (
	// PhaseDecide: the wish validated, the operation claimed, the dedup
	// decision taken.
	PhaseDecide = "decide"
	// PhaseStart: the appointment saga started.
	PhaseStart = "start"
	// PhaseAwait: waiting until the saga's state is worth answering (the
	// slot held and the payment link made, or an outcome).
	PhaseAwait = "await"
	// PhaseLifecycle: a confirmed booking's lifecycle read.
	PhaseLifecycle = "lifecycle"
)

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
		phases: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bookonce_agent_book_phase_seconds",
			Help:    "Time of each phase of a book_appointment call (decide, start, await, lifecycle).",
			Buckets: []float64{.001, .002, .005, .01, .02, .03, .05, .075, .1, .15, .2, .3, .5, .75, 1, 2, 5, 10},
		}, []string{"phase"}),
	}
	if m.duplicates == nil {
		m.duplicates = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: telemetry.DuplicatesBlockedName, Help: telemetry.DuplicatesBlockedHelp,
		}, []string{"layer", "tenant", "route"})
		reg.MustRegister(m.duplicates)
	}
	reg.MustRegister(m.calls, m.phases)
	return m
}

// Calls returns the tool-call counter (for tests and dashboards).
func (m *Metrics) Calls() *prometheus.CounterVec { return m.calls }

// Duplicates returns the duplicates counter the tools count on.
func (m *Metrics) Duplicates() *prometheus.CounterVec { return m.duplicates }

// Phases returns the phase histogram of book_appointment calls.
func (m *Metrics) Phases() *prometheus.HistogramVec { return m.phases }

// since observes the time from start in phase and returns now.
func (m *Metrics) since(phase string, start time.Time) time.Time {
	now := time.Now()
	if m != nil {
		m.phases.WithLabelValues(phase).Observe(now.Sub(start).Seconds())
	}
	return now
}

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
