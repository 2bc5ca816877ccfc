package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// transcript is a recorded sequence of tool calls as an agent platform
// makes them, with what each must answer.
type transcript struct {
	Description string `json:"description"`
	Steps       []struct {
		Note          string         `json:"note"`
		Tool          agent.ToolName `json:"tool"`
		Args          map[string]any `json:"args"`
		TimeoutMS     int            `json:"timeout_ms"`
		Expect        string         `json:"expect"` // a status, "timeout", "tool_error", or "" (any success)
		SaveOperation string         `json:"save_operation"`
		SaveAnswer    string         `json:"save_answer"`
		SameBookingAs string         `json:"same_booking_as"`
		SameAnswerAs  string         `json:"same_answer_as"`
	} `json:"steps"`
	Bookings int `json:"bookings"`
}

// TestTranscriptOfARetryingAgent replays testdata/retrying_agent.json
// against the real stack: timeouts, retries, re-plans, a second agent
// and a redelivery end in exactly the bookings the transcript expects.
func TestTranscriptOfARetryingAgent(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/retrying_agent.json")
	require.NoError(t, err)
	var tr transcript
	require.NoError(t, json.Unmarshal(raw, &tr))
	e := newEnv(t)
	s := e.connect(t, devToken)
	day := testsupport.Slot(t, time.Tuesday, 14)
	vars := map[string]string{"customer": newCustomer(), "day": day.Format("2.1."), "iso_14": day.Format(time.RFC3339)}
	answers := map[string]agent.BookingAnswer{}
	for i, st := range tr.Steps {
		args := fill(t, st.Args, vars)
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if st.TimeoutMS > 0 {
			ctx, cancel = context.WithTimeout(ctx, time.Duration(st.TimeoutMS)*time.Millisecond)
		}
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: string(st.Tool), Arguments: args})
		cancel()
		if st.Expect == "timeout" {
			require.Error(t, err, "step %d (%s)", i, st.Note)
			continue
		}
		require.NoError(t, err, "step %d (%s)", i, st.Note)
		if st.Expect == "tool_error" {
			require.True(t, res.IsError, "step %d (%s)", i, st.Note)
			continue
		}
		require.False(t, res.IsError, "step %d (%s): %v", i, st.Note, res.Content)
		out, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		var a agent.BookingAnswer
		require.NoError(t, json.Unmarshal(out, &a))
		var op agent.OperationOutput
		require.NoError(t, json.Unmarshal(out, &op))
		if st.Expect != "" {
			require.Equal(t, agent.Status(st.Expect), a.Status, "step %d (%s): %s", i, st.Note, a.Message)
		}
		if st.SameBookingAs != "" {
			require.Equal(t, answers[st.SameBookingAs].WorkflowID, a.WorkflowID, "step %d (%s)", i, st.Note)
			require.Equal(t, answers[st.SameBookingAs].BookingID, a.BookingID, "step %d (%s)", i, st.Note)
		}
		if st.SameAnswerAs != "" {
			require.Equal(t, answers[st.SameAnswerAs], a, "step %d (%s)", i, st.Note)
		}
		if st.SaveOperation != "" {
			vars[st.SaveOperation] = op.OperationID
		}
		if st.SaveAnswer != "" {
			answers[st.SaveAnswer] = a
			vars[st.SaveAnswer+".workflow_id"] = a.WorkflowID
		}
	}
	e.requireReservations(t, vars["customer"], tr.Bookings)
}

// fill replaces {{name}} in the string arguments.
func fill(t *testing.T, args map[string]any, vars map[string]string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, v := range args {
		if s, ok := v.(string); ok {
			for name, val := range vars {
				s = strings.ReplaceAll(s, "{{"+name+"}}", val)
			}
			require.NotContains(t, s, "{{", "unknown placeholder in %s", k)
			v = s
		}
		out[k] = v
	}
	return out
}
