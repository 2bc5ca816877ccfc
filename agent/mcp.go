package agent

import (
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bookonce/bookonce/internal/web"
)

// RouteMCP is the MCP endpoint (Streamable HTTP).
const RouteMCP = "/mcp"

// instructions tell the model how to use the tools once, at initialize.
const instructions = `bookonce books appointments exactly once. Call list_services, then find_slots (it returns an operation_id), then book_appointment with that operation_id. If a call times out or fails, repeat it with the same arguments and operation_id: it never books twice. On status "pending" call get_booking later instead of booking again; on "needs_confirmation" ask the customer first.`

// MCPServer returns an MCP server with every tool.
func (s *Service) MCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bookonce", Version: CapabilitiesVersion()}, &mcp.ServerOptions{Instructions: instructions})
	for _, t := range tools() {
		t.addMCP(srv, s)
	}
	return srv
}

// Handler serves the MCP endpoint and the HTTP function-calling routes,
// both behind the tenants' bearer tokens, failed attempts limited per
// client address (limiter: the gateway's budget, shared by its doors).
// MCP runs stateless: any replica answers any request, and operation IDs
// are scoped to the tenant.
func (s *Service) Handler(limiter *web.AuthLimiter) http.Handler {
	srv := s.MCPServer()
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, Logger: s.Logger,
		// The SDK refuses a loopback connection whose Host is not
		// localhost (DNS rebinding against unauthenticated local servers).
		// Every request here needs a tenant's token first, which a rebound
		// page does not have, and a reverse proxy on the same host forwards
		// over loopback with the public Host: it must pass.
		DisableLocalhostProtection: true,
	})
	mux := http.NewServeMux()
	mux.Handle(RouteMCP, streamable)
	s.routes(mux, limiter)
	return web.BearerAuthLimited(s.Tokens, limiter, mux)
}

// callerOf authenticates an MCP tool call from its HTTP headers (the
// outer BearerAuth has already refused bad tokens; this binds the tenant
// to the call itself).
func (s *Service) callerOf(req *mcp.CallToolRequest) (Caller, error) {
	if req.Extra == nil {
		return Caller{}, errUnauthenticated
	}
	tok := web.BearerToken(req.Extra.Header)
	tenant, ok := s.Tokens(tok)
	if tok == "" || !ok {
		return Caller{}, errUnauthenticated
	}
	c := Caller{Tenant: tenant, Token: tok}
	if req.Session != nil {
		c.Scope = req.Session.ID()
	}
	if req.Params != nil {
		if k, ok := req.Params.Meta["idempotencyKey"]; ok {
			c.ClientKey = fmt.Sprint(k)
		}
	}
	return c, nil
}
