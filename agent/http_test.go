package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// post calls a tool over plain HTTP; key "" sends no Idempotency-Key.
func (e env) post(t *testing.T, tool agent.ToolName, key string, args map[string]any) (int, http.Header, []byte) {
	t.Helper()
	body, err := json.Marshal(args)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, e.url+agent.RouteTools+"/"+string(tool), bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+devToken)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, out
}

// TestHTTPToolListingIsOpenAIStyle: GET /v1/agent/tools lists every tool
// as a function schema a function-calling API takes as it is.
func TestHTTPToolListingIsOpenAIStyle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	req, err := http.NewRequest(http.MethodGet, e.url+agent.RouteTools, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+devToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var listing struct {
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				Parameters  map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		CapabilitiesVersion string `json:"capabilities_version"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&listing))
	require.Len(t, listing.Tools, 8)
	require.Equal(t, agent.CapabilitiesVersion(), listing.CapabilitiesVersion)
	for _, tl := range listing.Tools {
		require.Equal(t, "function", tl.Type)
		require.NotEmpty(t, tl.Function.Description, tl.Function.Name)
		require.Equal(t, "object", tl.Function.Parameters["type"], tl.Function.Name)
	}

	unauth, err := http.Get(e.url + agent.RouteTools)
	require.NoError(t, err)
	unauth.Body.Close()
	require.Equal(t, http.StatusUnauthorized, unauth.StatusCode)
}

// TestHTTPToolCallKeyedByToolCallID: a platform redelivers a tool call
// with its tool-call ID as Idempotency-Key: the stored answer is replayed
// byte for byte; the same ID with other arguments is refused (422); a
// mutating call without a key is refused (400); bad input is a problem
// document the model can read.
func TestHTTPToolCallKeyedByToolCallID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	customer := newCustomer()
	args := map[string]any{"customer": customer, "service": "oil-change", "start": testsupport.Slot(t, time.Tuesday, 10).Format(time.RFC3339)}
	status, _, first := e.post(t, agent.ToolBookAppointment, "call_abc123", args)
	require.Equal(t, http.StatusOK, status, string(first))
	var a agent.BookingAnswer
	require.NoError(t, json.Unmarshal(first, &a))
	require.Equal(t, agent.StatusConfirmed, a.Status, a.Message)

	status, h, again := e.post(t, agent.ToolBookAppointment, "call_abc123", args)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "true", h.Get("Idempotent-Replayed"))
	require.Equal(t, first, again)

	other := map[string]any{"customer": customer, "service": "oil-change", "start": testsupport.Slot(t, time.Tuesday, 12).Format(time.RFC3339)}
	status, _, body := e.post(t, agent.ToolBookAppointment, "call_abc123", other)
	require.Equal(t, http.StatusUnprocessableEntity, status, string(body))
	require.Contains(t, string(body), "idempotency_key_reused")

	status, _, body = e.post(t, agent.ToolBookAppointment, "", args)
	require.Equal(t, http.StatusBadRequest, status, string(body))

	status, h, body = e.post(t, agent.ToolBookAppointment, "call_bad", map[string]any{"customer": "yesterday", "service": "oil-change", "start": "soon"})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Equal(t, "application/problem+json", h.Get("Content-Type"))
	require.Contains(t, string(body), "E.164")

	status, _, body = e.post(t, agent.ToolListServices, "", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	var services agent.ListServicesOutput
	require.NoError(t, json.Unmarshal(body, &services))
	require.Equal(t, "Europe/Berlin", services.Timezone)
	require.Len(t, services.Services, 3)

	e.requireReservations(t, customer, 1)
}

// TestFindSlotsByPhrase: find_slots takes the day as the customer said it
// and returns free starts of that day with an operation to book one; the
// slot booked through it is no longer offered.
func TestFindSlotsByPhrase(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	day := testsupport.Slot(t, time.Wednesday, 0)
	var found agent.FindSlotsOutput
	require.Empty(t, call(t, s, agent.ToolFindSlots, map[string]any{"service": "inspection", "when": day.Format("2.1."), "resource_id": "tech-anna"}, &found))
	require.NotEmpty(t, found.Slots)
	require.NotEmpty(t, found.OperationID)
	for _, sl := range found.Slots {
		start, err := time.Parse(time.RFC3339, sl.Start)
		require.NoError(t, err)
		require.Equal(t, day.Format(time.DateOnly), start.In(day.Location()).Format(time.DateOnly))
		require.Equal(t, "tech-anna", sl.ResourceID)
	}
	msg := call(t, s, agent.ToolFindSlots, map[string]any{"service": "massage"}, nil)
	require.Contains(t, msg, "tire-change", "an unknown service names the real ones")
}

// TestAgentMetricsAreOnTheAdminListener: the agent listener answers a
// bare /healthz without a token; the tool calls and the agent layer of
// duplicates_blocked are on the gateway's registry, served by its
// private admin listener.
func TestAgentMetricsAreOnTheAdminListener(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	args := map[string]any{"customer": newCustomer(), "service": "tire-change", "start": testsupport.Slot(t, time.Monday, 15).Format(time.RFC3339)}
	for range 2 {
		var a agent.BookingAnswer
		require.Empty(t, call(t, s, agent.ToolBookAppointment, args, &a))
		require.Equal(t, agent.StatusConfirmed, a.Status, a.Message)
	}
	health, err := http.Get(e.url + "/healthz")
	require.NoError(t, err)
	health.Body.Close()
	require.Equal(t, http.StatusOK, health.StatusCode)
	resp, err := http.Get(e.admin + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `bookonce_agent_tool_calls_total{outcome="confirmed",tool="book_appointment"} 2`)
	require.Contains(t, string(body), `bookonce_duplicates_blocked_total{layer="agent",route="book_appointment",tenant="demo"} 1`)
}

// TestAnotherTenantsBookingIsNotFound: get_booking reads only the
// caller's tenant; another tenant's workflow ID looks like none at all.
func TestAnotherTenantsBookingIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	for _, id := range []string{"appointment:nord:5be1c0ffee", "bk_doesnotexist", ""} {
		msg := call(t, s, agent.ToolGetBooking, map[string]any{"id": id}, nil)
		require.Contains(t, msg, "no booking with this id", id)
	}
}

// TestExpiredOperationClaimsAreReaped: a claim older than the operation
// IDs' lifetime is deleted, a younger one kept.
func TestExpiredOperationClaimsAreReaped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.pool.Exec(context.Background(), `INSERT INTO agent_operations (tenant_id, operation_id, args_hash, created_at)
		VALUES ('demo', 'op:old', 'x', now() - $1::interval), ('demo', 'op:young', 'y', now())`, (e.svc.Signer.TTL + time.Hour).String())
	require.NoError(t, err)
	n, err := e.svc.ReapOperations(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM agent_operations WHERE operation_id = 'op:young'`))
}
