package agent_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
)

// TestToolsListedWithSchemasAndHonestAnnotations: every tool is listed
// with an input and an output schema, and its hints say what it does:
// reads are read-only, booking is additive and idempotent, the lifecycle
// tools would be destructive.
func TestToolsListedWithSchemasAndHonestAnnotations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	res, err := s.ListTools(context.Background(), nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	cases := []struct {
		name                              agent.ToolName
		readOnly, idempotent, destructive bool
		required                          []string
	}{
		{agent.ToolListServices, true, false, false, nil},
		{agent.ToolFindSlots, true, false, false, []string{"service"}},
		{agent.ToolBeginOperation, true, false, false, nil},
		{agent.ToolBookAppointment, false, true, false, []string{"customer", "service", "start"}},
		{agent.ToolGetBooking, true, false, false, []string{"id"}},
		{agent.ToolListBookings, true, false, false, []string{"customer"}},
		{agent.ToolCancelBooking, false, true, true, []string{"id"}},
		{agent.ToolRescheduleBooking, false, true, true, []string{"id"}},
	}
	require.Len(t, res.Tools, len(cases))
	for _, c := range cases {
		t.Run(string(c.name), func(t *testing.T) {
			tl := byName[string(c.name)]
			require.NotNil(t, tl, "listed")
			require.NotEmpty(t, tl.Description)
			require.NotNil(t, tl.InputSchema)
			require.NotNil(t, tl.OutputSchema, "structured output")
			in := tl.InputSchema.(map[string]any)
			require.Equal(t, "object", in["type"])
			if c.required != nil {
				require.ElementsMatch(t, c.required, in["required"])
			}
			a := tl.Annotations
			require.NotNil(t, a)
			require.Equal(t, c.readOnly, a.ReadOnlyHint, "readOnlyHint")
			if !c.readOnly {
				require.Equal(t, c.idempotent, a.IdempotentHint, "idempotentHint")
				require.NotNil(t, a.DestructiveHint)
				require.Equal(t, c.destructive, *a.DestructiveHint, "destructiveHint")
			}
		})
	}
	book := byName[string(agent.ToolBookAppointment)].OutputSchema.(map[string]any)["properties"].(map[string]any)
	for _, field := range []string{"status", "workflow_id", "booking_id", "start", "message", "payment_url"} {
		require.Contains(t, book, field)
	}
}

// TestWrongTokenRefused: the MCP endpoint takes the APIs' tokens only.
func TestWrongTokenRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "intruder", Version: "1"}, nil)
	_, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.url + agent.RouteMCP, HTTPClient: &http.Client{Transport: bearer{"not-a-token", http.DefaultTransport}},
	}, nil)
	require.Error(t, err)
}

// TestBehindAReverseProxyOnTheSameHost: a proxy forwards over loopback
// with the public Host header; the MCP endpoint answers it.
func TestBehindAReverseProxyOnTheSameHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "proxied", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.url + agent.RouteMCP, HTTPClient: &http.Client{Transport: publicHost{bearer{devToken, http.DefaultTransport}}},
	}, nil)
	require.NoError(t, err)
	defer s.Close()
	var out agent.ListServicesOutput
	require.Empty(t, call(t, s, agent.ToolListServices, nil, &out))
	require.Len(t, out.Services, 3)
}

// publicHost sends the Host a reverse proxy keeps.
type publicHost struct{ next http.RoundTripper }

func (p publicHost) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = "book.example.com"
	return p.next.RoundTrip(r)
}
