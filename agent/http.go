package agent

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

// Routes of the plain HTTP variant (function calling without MCP).
const (
	RouteTools   = "/v1/agent/tools"
	routeListing = "GET " + RouteTools
	routeCall    = "POST " + RouteTools + "/{name}"
)

// Function is a tool as OpenAI-style function calling declares it.
type Function struct {
	Type     string         `json:"type"` // "function"
	Function FunctionSchema `json:"function"`
}

// FunctionSchema is the declaration of one function.
type FunctionSchema struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parameters  any    `json:"parameters"`
}

// Functions returns every tool as an OpenAI-style function schema.
func Functions() []Function {
	out := make([]Function, 0, len(tools()))
	for _, t := range tools() {
		out = append(out, Function{Type: "function", Function: FunctionSchema{Name: string(t.name), Description: t.description, Parameters: t.in}})
	}
	return out
}

// routes mounts the HTTP variant: the listing, and one POST per call.
// Mutating tools need an Idempotency-Key (the platform's tool-call ID)
// and go through the idempotency layer, so a redelivered call gets the
// stored answer; read-only tools need none.
// The voice platforms' deliveries run their tool calls through the same
// two handlers, keyed by the platform's IDs.
func (s *Service) routes(mux *http.ServeMux, limiter *web.AuthLimiter) {
	mux.HandleFunc(routeListing, func(w http.ResponseWriter, _ *http.Request) {
		web.WriteJSON(w, http.StatusOK, map[string]any{"tools": Functions(), "capabilities_version": CapabilitiesVersion()})
	})
	call := http.HandlerFunc(s.serveCall)
	var keyed http.Handler = call
	if s.Idempotency != nil {
		keyed = s.Idempotency.Middleware(routeCall, call)
	}
	platforms := s.servePlatform(limiter, call, keyed)
	mux.Handle("POST "+RoutePlatforms+"/{platform}", platforms)
	mux.Handle("POST "+RoutePlatforms+"/{platform}/{tool}", platforms) // a URL per tool (ElevenLabs)
	mux.HandleFunc(routeCall, func(w http.ResponseWriter, r *http.Request) {
		t, ok := toolNamed(r.PathValue("name"))
		if !ok {
			web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "unknown_tool", "no tool named "+r.PathValue("name")+"; GET "+RouteTools+" lists them"))
			return
		}
		if t.annotations.ReadOnlyHint {
			call.ServeHTTP(w, r)
			return
		}
		keyed.ServeHTTP(w, r)
	})
}

func toolNamed(name string) (tool, bool) {
	for _, t := range tools() {
		if string(t.name) == name {
			return t, true
		}
	}
	return tool{}, false
}

// serveCall runs one tool with the JSON body as its arguments. A tool
// error (bad input, a refused operation) is 422 problem+json with the
// message the model should read; a booking's outcome, pending included,
// is 200.
func (s *Service) serveCall(w http.ResponseWriter, r *http.Request) {
	t, _ := toolNamed(r.PathValue("name"))
	tenant, _ := web.Tenant(r.Context())
	args, err := io.ReadAll(http.MaxBytesReader(w, r.Body, idempotency.MaxBodyBytes))
	if err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "malformed_body", "read the arguments: "+err.Error()))
		return
	}
	if len(args) > 0 && !json.Valid(args) {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "malformed_body", "the body must be the tool's arguments as a JSON object"))
		return
	}
	c := Caller{Tenant: tenant, Token: web.BearerToken(r.Header), ClientKey: r.Header.Get(idempotency.HeaderKey)}
	out, err := t.run(r.Context(), s, c, args)
	var ae *argsError
	switch {
	case errors.As(err, &ae):
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "malformed_body", err.Error()))
	case isRefusal(err):
		idempotency.Keep(r.Context()) // a refused operation stays refused under this key
		web.WriteProblem(w, web.NewProblem(http.StatusUnprocessableEntity, "operation_refused", err.Error()))
	case err != nil:
		web.WriteProblem(w, web.NewProblem(http.StatusUnprocessableEntity, "tool_error", err.Error()))
	default:
		web.WriteJSON(w, http.StatusOK, out)
	}
}
