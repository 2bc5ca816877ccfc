package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/payments"
)

// The APIs under test. Each one names its document, the Go packages whose
// ServeMux registrations it must cover, how to build its real handler, and
// how its catch-all answers a request that matches no route.
const (
	calendarToken = "tok-openapi"
	paymentsKey   = "sk_test_openapi"
)

type apiCase struct {
	name string
	file string
	// sources are the package directories whose route registrations the
	// document must cover: the API package and internal/web, which mounts
	// /healthz and /metrics in front of every service.
	sources []string
	handler func(t *testing.T, pool *pgxpool.Pool) http.Handler
	auth    func(r *http.Request)
	// noRoute reports whether an answer is the mux's "no such route"
	// rather than a handler's answer (such as "no such object").
	noRoute func(status int, body []byte) bool
}

var apis = []apiCase{
	{
		name:    "calendar",
		file:    "calendar.openapi.yaml",
		sources: []string{"../calendar", "../internal/web"},
		handler: calendarHandler,
		auth:    func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+calendarToken) },
		noRoute: func(status int, body []byte) bool {
			if status == http.StatusMethodNotAllowed {
				return true
			}
			var p struct{ Code, Detail string }
			_ = json.Unmarshal(body, &p)
			return status == http.StatusNotFound && p.Code == calendar.CodeNotFound && strings.HasPrefix(p.Detail, "no route ")
		},
	},
	{
		name:    "payments",
		file:    "payments.openapi.yaml",
		sources: []string{"../payments", "../internal/web"},
		handler: paymentsHandler,
		auth:    func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+paymentsKey) },
		noRoute: func(status int, body []byte) bool {
			if status == http.StatusMethodNotAllowed {
				return true
			}
			var e struct {
				Error struct{ Code, Message string }
			}
			_ = json.Unmarshal(body, &e)
			// "No such payment_intent" is resource_missing; an unknown
			// route has no code and Stripe's "Unrecognized request URL".
			return status == http.StatusNotFound && e.Error.Code == "" && strings.HasPrefix(e.Error.Message, "Unrecognized request URL")
		},
	},
}

// fixedNow is a Monday; the flows book Tuesday 2026-12-01 14:00 Berlin.
var fixedNow = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func calendarHandler(t *testing.T, pool *pgxpool.Pool) http.Handler {
	t.Helper()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	now := func() time.Time { return fixedNow }
	srv := &calendar.Server{
		Pool: pool, Idempotency: idempotency.NewStore(pool, idempotency.Options{Now: now, Registerer: reg}),
		Tokens: web.StaticTokens(map[string]string{calendarToken: "demo"}), Timezone: berlin, HoldTTL: 10 * time.Minute,
		Now: now, Logger: slog.New(slog.DiscardHandler),
	}
	return web.Service{Name: "calendar", Handler: srv.Handler(), Gatherer: reg}.Mux()
}

func paymentsHandler(t *testing.T, pool *pgxpool.Pool) http.Handler {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	// As in production (stack.PaymentsService): key errors in Stripe's shape.
	store := idempotency.NewStore(pool, idempotency.Options{ProblemStyle: idempotency.StripeJSON, Registerer: reg})
	srv := &payments.Server{
		Pool: pool, Idempotency: store, Tokens: web.StaticTokens(map[string]string{paymentsKey: "demo"}),
		Logger: slog.New(slog.DiscardHandler),
	}
	return web.Service{Name: "payments", Handler: srv.Handler(), Gatherer: reg}.Mux()
}

// TestOpenAPIDocuments checks the documents' own consistency: OpenAPI 3.1,
// resolvable references, declared path parameters, unique operation IDs,
// and the Idempotency-Key header on every mutating operation.
func TestOpenAPIDocuments(t *testing.T) {
	cases := []struct {
		file    string
		schemas []string
	}{
		{"calendar.openapi.yaml", []string{"Hold", "HoldRequest", "Booking", "Slot", "Resource", "Service", "Operation", "Problem", "FieldError",
			"HoldList", "BookingList", "SlotList", "ResourceList", "ServiceList"}},
		{"payments.openapi.yaml", []string{"PaymentIntent", "Charge", "Refund", "PaymentIntentList", "PaymentIntentSearchResult", "Error", "ErrorDetail",
			"PaymentIntentCreateParams", "PaymentIntentCaptureParams", "PaymentIntentCancelParams", "RefundCreateParams"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			d := loadDoc(t, tc.file)
			version, _ := d.root["openapi"].(string)
			require.Regexp(t, `^3\.1\.\d+$`, version, "openapi version")
			info := asMap(d.root["info"])
			require.NotEmpty(t, info["title"], "info.title")
			require.NotEmpty(t, info["version"], "info.version")
			require.NotEmpty(t, asMap(d.root["paths"]), "paths")
			components := asMap(d.root["components"])
			require.NotEmpty(t, components, "components")
			require.NotEmpty(t, asMap(components["securitySchemes"]), "components.securitySchemes")
			schemas := asMap(components["schemas"])
			for _, s := range tc.schemas {
				require.Contains(t, schemas, s, "components.schemas")
			}

			d.checkRefs(t, d.root, "#")

			ops := d.operations()
			require.NotEmpty(t, ops)
			ids := map[string]string{}
			for _, op := range ops {
				where := op.method + " " + op.path
				id, _ := op.op["operationId"].(string)
				require.NotEmpty(t, id, "%s: operationId", where)
				require.NotContains(t, ids, id, "%s: operationId %q also used by %s", where, id, ids[id])
				ids[id] = where

				responses := asMap(op.op["responses"])
				require.NotEmpty(t, responses, "%s: responses", where)
				for code, r := range responses {
					require.NotEmpty(t, asMap(d.resolve(r))["description"], "%s: response %s needs a description", where, code)
				}

				// Every {name} in the template is a required path parameter,
				// and every path parameter is in the template.
				inTemplate := map[string]bool{}
				for _, m := range wildcardRE.FindAllStringSubmatch(op.path, -1) {
					inTemplate[m[1]] = true
				}
				declared := map[string]bool{}
				for _, p := range op.params {
					if p["in"] == "path" {
						name, _ := p["name"].(string)
						declared[name] = true
						require.Equal(t, true, p["required"], "%s: path parameter %s must be required", where, name)
						require.True(t, inTemplate[name], "%s: path parameter %s is not in the path", where, name)
					}
				}
				for name := range inTemplate {
					require.True(t, declared[name], "%s: {%s} is not declared as a path parameter", where, name)
				}

				if mutating(op.method) && !op.browserForm() {
					require.True(t, op.requiresIdempotencyKey(), "%s: a mutating operation must declare the Idempotency-Key header as required", where)
				}
			}
		})
	}
}

// TestOpenAPICoversRegisteredRoutes parses the route registrations out of
// the Go source (mux.Handle, mux.HandleFunc, and helpers such as idem that
// wrap them) and requires every registered pattern in the document, with
// the Idempotency-Key header wherever the route runs in the idempotency
// middleware.
func TestOpenAPICoversRegisteredRoutes(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			d := loadDoc(t, api.file)
			routes := registeredRoutes(t, api.sources...)
			require.True(t, slices.ContainsFunc(routes, func(r route) bool { return strings.HasPrefix(r.path, "/v1/") }),
				"found no /v1 route registrations in %v; has the registration style changed?", api.sources)
			for _, r := range routes {
				if r.path == "/" {
					continue // the catch-all that answers "no such route"
				}
				item := asMap(asMap(d.root["paths"])[r.path])
				require.NotNil(t, item, "%s: %s registers %q but the document has no path %s", api.file, r.pos, r.pattern, r.path)
				if r.method == "" {
					require.NotEmpty(t, d.pathOperations(r.path), "%s: %s registers %q (any method) but documents no operation", api.file, r.pos, r.pattern)
					continue
				}
				op := d.operation(r.method, r.path)
				require.NotNil(t, op, "%s: %s registers %q but the document has no %s %s", api.file, r.pos, r.pattern, r.method, r.path)
				if r.idempotent {
					require.True(t, op.requiresIdempotencyKey(), "%s: %q runs in the idempotency middleware; document the Idempotency-Key header as required", api.file, r.pattern)
				}
			}
		})
	}
}

// TestOpenAPICalendarOperationEnum requires that the operation parameter of
// GET /v1/operations/{key} lists exactly the idempotent routes.
func TestOpenAPICalendarOperationEnum(t *testing.T) {
	d := loadDoc(t, "calendar.openapi.yaml")
	op := d.operation("GET", "/v1/operations/{key}")
	require.NotNil(t, op)
	var enum []string
	for _, p := range op.params {
		if p["name"] == "operation" {
			for _, v := range asSlice(asMap(p["schema"])["enum"]) {
				enum = append(enum, v.(string))
			}
		}
	}
	var idem []string
	for _, r := range registeredRoutes(t, "../calendar") {
		if r.idempotent {
			idem = append(idem, r.pattern)
		}
	}
	require.NotEmpty(t, idem)
	require.ElementsMatch(t, idem, enum)
}

// TestOpenAPICalendarSchemasMatchGoTypes requires the calendar schemas to
// have exactly the JSON members of the Go types, with the members that are
// never omitted as required.
func TestOpenAPICalendarSchemasMatchGoTypes(t *testing.T) {
	d := loadDoc(t, "calendar.openapi.yaml")
	cases := []struct {
		schema string
		value  any
		extra  []string // members merged in outside the struct
	}{
		{"HoldRequest", calendar.HoldRequest{}, nil},
		{"Hold", calendar.Hold{}, nil},
		{"Booking", calendar.Booking{}, nil},
		{"Slot", calendar.Slot{}, nil},
		{"Resource", calendar.Resource{}, nil},
		{"Service", calendar.Service{}, nil},
		{"Operation", calendar.Operation{}, nil},
		{"Problem", web.Problem{}, []string{"alternatives", "existing"}}, // Problem.Extra on slot_unavailable, customer_already_booked
		{"FieldError", web.FieldError{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.schema, func(t *testing.T) {
			schema := asMap(d.resolve(asMap(asMap(d.root["components"])["schemas"])[tc.schema]))
			require.NotNil(t, schema, "components.schemas.%s", tc.schema)
			members, required := jsonMembers(t, reflect.TypeOf(tc.value))
			require.ElementsMatch(t, append(members, tc.extra...), sortedKeys(asMap(schema["properties"])),
				"the members of %T and the properties of schema %s differ", tc.value, tc.schema)
			var documented []string
			for _, r := range asSlice(schema["required"]) {
				documented = append(documented, fmt.Sprint(r))
			}
			require.ElementsMatch(t, required, documented, "the members %T always sends and the schema's required differ", tc.value)
		})
	}
}

// jsonMembers lists the JSON member names of a struct type and those
// that are never omitted.
func jsonMembers(t *testing.T, typ reflect.Type) (members, required []string) {
	t.Helper()
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		require.False(t, f.Anonymous, "%s.%s: embedded fields are not supported here", typ, f.Name)
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		members = append(members, name)
		if !slices.Contains(strings.Split(opts, ","), "omitempty") && !slices.Contains(strings.Split(opts, ","), "omitzero") {
			required = append(required, name)
		}
	}
	return members, required
}

// TestOpenAPIParametersMatchHandlers requires each route's documented
// query and form parameters to be exactly those its handler reads: the
// calendar's URL.Query().Get("name") calls, and the formSpec a payments
// handler binds (which answers parameter_unknown to anything else). Values
// are shapes: scalar, map (metadata[key]) or list (expand[]).
func TestOpenAPIParametersMatchHandlers(t *testing.T) {
	cases := []struct {
		api    string
		file   string
		dir    string
		inCode func(t *testing.T, pkg *goPackage, fn *ast.FuncDecl) map[string]string
	}{
		{"calendar", "calendar.openapi.yaml", "../calendar", queryGets},
		{"payments", "payments.openapi.yaml", "../payments", formSpecParams},
	}
	for _, tc := range cases {
		t.Run(tc.api, func(t *testing.T) {
			d := loadDoc(t, tc.file)
			pkg := loadPackage(t, tc.dir)
			routes := pkg.routes(t)
			require.NotEmpty(t, routes)
			for _, r := range routes {
				if r.path == "/" {
					continue
				}
				require.NotEmpty(t, r.handler, "%s: %q is not registered with a method; teach this test to find its parameters", r.pos, r.pattern)
				fn := pkg.method(r.handler)
				require.NotNil(t, fn, "%s: no method %s", r.pos, r.handler)
				op := d.operation(r.method, r.path)
				require.NotNil(t, op, "%s %s is not documented", r.method, r.path)
				require.Equal(t, tc.inCode(t, pkg, fn), op.documentedInputs(),
					"%q: the parameters %s reads (name: shape) differ from the documented ones", r.pattern, r.handler)
			}
		})
	}
}

// documentedInputs are the query parameters and the properties of a form
// request body, by shape.
func (o docOp) documentedInputs() map[string]string {
	shape := func(schema any) string {
		switch types := schemaTypes(asMap(o.d.resolve(schema))); {
		case slices.Contains(types, "array"):
			return "list"
		case slices.Contains(types, "object"):
			return "map"
		}
		return "scalar"
	}
	out := map[string]string{}
	for _, p := range o.params {
		if p["in"] == "query" {
			out[fmt.Sprint(p["name"])] = shape(p["schema"])
		}
	}
	body := asMap(o.d.resolve(o.op["requestBody"]))
	form := asMap(asMap(body["content"])["application/x-www-form-urlencoded"])
	for name, s := range asMap(asMap(o.d.resolve(form["schema"]))["properties"]) {
		out[name] = shape(s)
	}
	return out
}

// queryGets finds q.Get("name") and r.URL.Query().Get("name") in fn.
func queryGets(t *testing.T, _ *goPackage, fn *ast.FuncDecl) map[string]string {
	t.Helper()
	isQuery := func(e ast.Expr) bool {
		call, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Query" && len(call.Args) == 0
	}
	queries := map[string]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for i, rhs := range as.Rhs {
				if id, ok := as.Lhs[i].(*ast.Ident); ok && isQuery(rhs) {
					queries[id.Name] = true
				}
			}
		}
		return true
	})
	out := map[string]string{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Get" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); !(ok && queries[id.Name]) && !isQuery(sel.X) {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		require.True(t, ok && lit.Kind == token.STRING, "%s: a query parameter name that is not a string literal", fn.Name.Name)
		name, err := strconv.Unquote(lit.Value)
		require.NoError(t, err)
		out[name] = "scalar"
		return true
	})
	return out
}

// formSpecParams finds the one formSpec fn binds, by package variable or
// literal, and returns its parameters.
func formSpecParams(t *testing.T, pkg *goPackage, fn *ast.FuncDecl) map[string]string {
	t.Helper()
	isSpec := func(e ast.Expr) (*ast.CompositeLit, bool) {
		lit, ok := e.(*ast.CompositeLit)
		if !ok {
			return nil, false
		}
		id, ok := lit.Type.(*ast.Ident)
		return lit, ok && id.Name == "formSpec"
	}
	vars := map[string]*ast.CompositeLit{}
	for _, f := range pkg.files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := isSpec(vs.Values[i]); ok {
							vars[name.Name] = lit
						}
					}
				}
			}
		}
	}
	var specs []*ast.CompositeLit
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			if lit, ok := vars[x.Name]; ok {
				specs = append(specs, lit)
			}
		case *ast.CompositeLit:
			if lit, ok := isSpec(x); ok {
				specs = append(specs, lit)
				return false
			}
		}
		return true
	})
	require.Len(t, specs, 1, "%s binds %d formSpecs; the test expects exactly one", fn.Name.Name, len(specs))
	// objects and arrays take nested brackets (payment_intent_data[...],
	// line_items[0][...]): an object and an array in the document.
	shapes := map[string]string{"scalars": "scalar", "maps": "map", "lists": "list", "objects": "map", "arrays": "list"}
	out := map[string]string{}
	for _, elt := range specs[0].Elts {
		kv := elt.(*ast.KeyValueExpr)
		key := kv.Key.(*ast.Ident).Name
		require.Contains(t, shapes, key, "formSpec field %s", key)
		for _, e := range kv.Value.(*ast.CompositeLit).Elts {
			lit, ok := e.(*ast.BasicLit)
			require.True(t, ok && lit.Kind == token.STRING, "formSpec.%s: not a string literal", key)
			name, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			out[name] = shapes[key]
		}
	}
	return out
}

// TestOpenAPIRoutesAnswer sends a request for every documented operation
// through the real handler (with placeholder path values) and requires a
// route to answer, not the catch-all; the answer's status, media type,
// body and notable headers must be documented for the operation. It also
// checks the documented security (401 without credentials) and that every
// POST really refuses a request without an Idempotency-Key.
func TestOpenAPIRoutesAnswer(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			d := loadDoc(t, api.file)
			h := api.handler(t, testsupport.Database(t))

			// The detector is not vacuous: an unknown route is detected.
			req := httptest.NewRequest(http.MethodGet, "/v1/no-such-route-"+api.name, nil)
			api.auth(req)
			status, _, body := serve(h, req)
			require.True(t, api.noRoute(status, body), "the no-route detector must recognise %d %s", status, body)

			for _, op := range d.operations() {
				t.Run(op.method+" "+op.path, func(t *testing.T) {
					send := func(auth, key bool) (int, http.Header, []byte) {
						req := op.placeholderRequest(t)
						if auth {
							api.auth(req)
						}
						if key {
							req.Header.Set(idempotency.HeaderKey, nextKey("probe"))
						}
						return serve(h, req)
					}

					status, header, body := send(true, true)
					require.False(t, api.noRoute(status, body), "%s %s: the handler has no such route: %d %s", op.method, op.path, status, body)
					d.checkAnswer(t, op, status, header, body)

					status, header, body = send(false, true)
					require.False(t, api.noRoute(status, body))
					if d.secured(op) {
						require.Equal(t, http.StatusUnauthorized, status, "documented as secured, answered without credentials: %s", body)
					} else {
						require.NotEqual(t, http.StatusUnauthorized, status, "documented with security: [] but answers 401")
					}
					d.checkAnswer(t, op, status, header, body)

					if mutating(op.method) && !op.browserForm() {
						status, header, body = send(true, false)
						require.Equal(t, http.StatusBadRequest, status, "a POST without Idempotency-Key must be refused: %s", body)
						require.Contains(t, string(body), idempotency.CodeKeyMissing)
						d.checkAnswer(t, op, status, header, body)
					}
				})
			}
		})
	}
}

// step is one request of a walkthrough; path and body may use what
// earlier steps saved.
type step struct {
	name        string
	method      string
	path        func(v vars) string
	contentType string
	body        func(v vars) string
	key         string
	auth        func(r *http.Request) // nil: the API's default credentials
	want        int
	replayed    bool
	save        func(v vars, body map[string]any)
}

type vars map[string]string

// TestOpenAPIDescribesRealAnswers walks each API through its main paths
// (successes, replays, decided refusals) and validates every answer against
// the documented responses: status, media type, headers, and body schema,
// where documented objects accept no undocumented members.
func TestOpenAPIDescribesRealAnswers(t *testing.T) {
	str := func(s string) func(vars) string { return func(vars) string { return s } }
	holdBody := func(ref, start string) func(vars) string {
		return str(`{"resource_id":"bay-1","service":"tire-change","start":"` + start + `","customer":"+4915112345678","reference":"` + ref + `"}`)
	}
	basic := func(r *http.Request) { r.SetBasicAuth(paymentsKey, "") }
	form := "application/x-www-form-urlencoded"
	search := url.Values{"query": {"metadata['booking_reference']:'appointment:demo:1' AND status:'succeeded'"}, "expand[]": {"data.latest_charge"}}.Encode()

	flows := map[string][]step{
		"calendar": {
			{name: "resources", method: "GET", path: str("/v1/resources"), want: 200},
			{name: "services", method: "GET", path: str("/v1/services"), want: 200},
			{name: "availability", method: "GET", path: str("/v1/availability?service=tire-change&from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z"), want: 200},
			{name: "create hold", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				body: holdBody("appointment:demo:1", "2026-12-01T13:00:00Z"), key: "k-hold", want: 201,
				save: func(v vars, b map[string]any) { v["hold"] = b["id"].(string) }},
			{name: "replay create hold", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				body: holdBody("appointment:demo:1", "2026-12-01T13:00:00Z"), key: "k-hold", want: 201, replayed: true},
			{name: "same reference, new key", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				body: holdBody("appointment:demo:1", "2026-12-01T13:00:00Z"), key: "k-hold-2", want: 200},
			{name: "slot taken", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				key: "k-hold-3", want: 409, body: str(`{"resource_id":"bay-1","service":"tire-change","start":"2026-12-01T13:00:00Z","customer":"+4915100000000","reference":"appointment:demo:2"}`)},
			{name: "customer already booked", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				key: "k-hold-7", want: 409, body: str(`{"service":"tire-change","start":"2026-12-01T13:00:00Z","customer":"0151 12345678","reference":"frontdesk:7"}`)},
			{name: "deliberate second booking", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				key: "k-hold-8", want: 201, body: str(`{"service":"tire-change","start":"2026-12-01T13:00:00Z","customer":"+4915112345678","reference":"frontdesk:8","deliberate_second":true}`)},
			{name: "reference holds another slot", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				body: holdBody("appointment:demo:1", "2026-12-01T15:00:00Z"), key: "k-hold-4", want: 409},
			{name: "key reused with another payload", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				body: holdBody("appointment:demo:3", "2026-12-01T09:00:00Z"), key: "k-hold", want: 422},
			{name: "outside opening hours", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				body: holdBody("appointment:demo:5", "2026-12-01T22:00:00Z"), key: "k-hold-5", want: 422},
			{name: "invalid hold", method: "POST", path: str("/v1/holds"), contentType: "application/json",
				body: str(`{"service":"tire-change"}`), key: "k-hold-6", want: 400},
			{name: "get hold", method: "GET", path: func(v vars) string { return "/v1/holds/" + v["hold"] }, want: 200},
			{name: "holds by reference", method: "GET", path: str("/v1/holds?reference=appointment:demo:1"), want: 200},
			{name: "operation of a key", method: "GET", path: str("/v1/operations/k-hold?operation=" + url.QueryEscape(calendar.OpCreateHold)), want: 200},
			{name: "confirm", method: "POST", path: func(v vars) string { return "/v1/holds/" + v["hold"] + "/confirm" }, key: "k-confirm", want: 201,
				save: func(v vars, b map[string]any) { v["booking"] = b["id"].(string) }},
			{name: "confirm again, new key", method: "POST", path: func(v vars) string { return "/v1/holds/" + v["hold"] + "/confirm" }, key: "k-confirm-2", want: 200},
			{name: "release a confirmed hold", method: "POST", path: func(v vars) string { return "/v1/holds/" + v["hold"] + "/release" }, key: "k-release", want: 409},
			{name: "get booking", method: "GET", path: func(v vars) string { return "/v1/bookings/" + v["booking"] }, want: 200},
			{name: "list bookings", method: "GET", path: str("/v1/bookings?customer=%2B4915112345678"), want: 200},
			{name: "cancel booking", method: "POST", path: func(v vars) string { return "/v1/bookings/" + v["booking"] + "/cancel" }, key: "k-cancel", want: 200},
			{name: "cancelled hold", method: "GET", path: func(v vars) string { return "/v1/holds/" + v["hold"] }, want: 200},
			{name: "unknown booking", method: "GET", path: str("/v1/bookings/bk_nope"), want: 404},
			{name: "health", method: "GET", path: str("/healthz"), want: 200},
			{name: "metrics", method: "GET", path: str("/metrics"), want: 200},
		},
		"payments": {
			{name: "authorise", method: "POST", path: str("/v1/payment_intents"), contentType: form, key: "p-auth", want: 200,
				body: str("amount=5000&currency=eur&capture_method=manual&confirm=true&payment_method=pm_card_visa" +
					"&metadata[booking_reference]=appointment:demo:1&metadata[step]=deposit&expand[]=latest_charge"),
				save: func(v vars, b map[string]any) { v["pi"] = b["id"].(string) }},
			{name: "replay authorise", method: "POST", path: str("/v1/payment_intents"), contentType: form, key: "p-auth", want: 200, replayed: true,
				body: str("amount=5000&currency=eur&capture_method=manual&confirm=true&payment_method=pm_card_visa" +
					"&metadata[booking_reference]=appointment:demo:1&metadata[step]=deposit&expand[]=latest_charge")},
			{name: "same step, other amount", method: "POST", path: str("/v1/payment_intents"), contentType: form, key: "p-auth-2", want: 400,
				body: str("amount=6000&currency=eur&capture_method=manual&confirm=true&payment_method=pm_card_visa" +
					"&metadata[booking_reference]=appointment:demo:1&metadata[step]=deposit")},
			{name: "unknown parameter", method: "POST", path: str("/v1/payment_intents"), contentType: form, key: "p-bad", want: 400,
				body: str("amount=5000&currency=eur&confirm=true&payment_method=pm_card_visa&colour=blue")},
			{name: "retrieve expanded", method: "GET", path: func(v vars) string { return "/v1/payment_intents/" + v["pi"] + "?expand[]=latest_charge" }, want: 200},
			{name: "capture part", method: "POST", path: func(v vars) string { return "/v1/payment_intents/" + v["pi"] + "/capture" },
				contentType: form, body: str("amount_to_capture=3000"), key: "p-capture", want: 200},
			{name: "cancel a succeeded intent", method: "POST", path: func(v vars) string { return "/v1/payment_intents/" + v["pi"] + "/cancel" },
				key: "p-cancel", want: 400},
			{name: "list", method: "GET", path: str("/v1/payment_intents?limit=1&expand[]=data.latest_charge"), want: 200},
			{name: "list with basic auth", method: "GET", path: str("/v1/payment_intents"), auth: basic, want: 200},
			{name: "search", method: "GET", path: str("/v1/payment_intents/search?" + search), want: 200},
			{name: "refund", method: "POST", path: str("/v1/refunds"), contentType: form, key: "p-refund", want: 200,
				body: func(v vars) string {
					return "payment_intent=" + v["pi"] + "&amount=1000&reason=requested_by_customer&metadata[note]=goodwill"
				},
				save: func(v vars, b map[string]any) { v["re"] = b["id"].(string) }},
			{name: "refund too much", method: "POST", path: str("/v1/refunds"), contentType: form, key: "p-refund-2", want: 400,
				body: func(v vars) string { return "payment_intent=" + v["pi"] + "&amount=999999" }},
			{name: "refund unknown charge", method: "POST", path: str("/v1/refunds"), contentType: form, key: "p-refund-3", want: 400,
				body: str("charge=ch_nope")},
			{name: "retrieve refund", method: "GET", path: func(v vars) string { return "/v1/refunds/" + v["re"] }, want: 200},
			{name: "decline", method: "POST", path: str("/v1/payment_intents"), contentType: form, key: "p-decline", want: 402,
				body: str("amount=100&currency=eur&confirm=true&payment_method=pm_card_chargeDeclined"),
				save: func(v vars, b map[string]any) {
					v["declined"] = asMap(asMap(b["error"])["payment_intent"])["id"].(string)
				}},
			{name: "void declined", method: "POST", path: func(v vars) string { return "/v1/payment_intents/" + v["declined"] + "/cancel" },
				contentType: form, body: str("cancellation_reason=abandoned"), key: "p-void", want: 200},
			{name: "unknown intent", method: "GET", path: str("/v1/payment_intents/pi_nope"), want: 404},
			{name: "webhook endpoint", method: "POST", path: str("/v1/webhook_endpoints"), contentType: form, key: "p-we", want: 200,
				body: str("url=https://example.com/hook&enabled_events[]=*")},
			{name: "create unconfirmed", method: "POST", path: str("/v1/payment_intents"), contentType: form, key: "p-later", want: 200,
				body: str("amount=700&currency=eur&capture_method=manual&metadata[booking_reference]=appointment:demo:9"),
				save: func(v vars, b map[string]any) { v["later"] = b["id"].(string) }},
			{name: "confirm", method: "POST", path: func(v vars) string { return "/v1/payment_intents/" + v["later"] + "/confirm" },
				contentType: form, body: str("payment_method=pm_card_visa"), key: "p-confirm", want: 200},
			{name: "checkout session", method: "POST", path: str("/v1/checkout/sessions"), contentType: form, key: "p-cs", want: 200,
				body: str("mode=payment&success_url=https://example.com/ok&line_items[0][price_data][currency]=eur" +
					"&line_items[0][price_data][unit_amount]=2000&line_items[0][price_data][product_data][name]=Deposit" +
					"&line_items[0][quantity]=1&payment_intent_data[capture_method]=manual" +
					"&payment_intent_data[metadata][booking_reference]=appointment:demo:10&locale=de&client_reference_id=appointment:demo:10"),
				save: func(v vars, b map[string]any) { v["cs"] = b["id"].(string) }},
			{name: "checkout session key reused", method: "POST", path: str("/v1/checkout/sessions"), contentType: form, key: "p-cs", want: 400,
				body: str("mode=payment&success_url=https://example.com/other")},
			{name: "retrieve session", method: "GET", path: func(v vars) string { return "/v1/checkout/sessions/" + v["cs"] }, want: 200},
			{name: "expire session", method: "POST", path: func(v vars) string { return "/v1/checkout/sessions/" + v["cs"] + "/expire" }, key: "p-expire", want: 200},
			{name: "expire again", method: "POST", path: func(v vars) string { return "/v1/checkout/sessions/" + v["cs"] + "/expire" }, key: "p-expire-2", want: 400},
			{name: "events", method: "GET", path: str("/v1/events?limit=100&created[gte]=0"), want: 200,
				save: func(v vars, b map[string]any) { v["evt"] = asMap(asSlice(b["data"])[0])["id"].(string) }},
			{name: "events of a type", method: "GET", path: str("/v1/events?type=charge.refunded"), want: 200},
			{name: "event", method: "GET", path: func(v vars) string { return "/v1/events/" + v["evt"] }, want: 200},
			{name: "unknown event", method: "GET", path: str("/v1/events/evt_nope"), want: 404},
			{name: "health", method: "GET", path: str("/healthz"), want: 200},
			{name: "metrics", method: "GET", path: str("/metrics"), want: 200},
		},
	}
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			steps := flows[api.name]
			require.NotEmpty(t, steps)
			d := loadDoc(t, api.file)
			h := api.handler(t, testsupport.Database(t))
			v := vars{}
			for _, s := range steps {
				ok := t.Run(s.name, func(t *testing.T) {
					var body io.Reader
					if s.body != nil {
						body = strings.NewReader(s.body(v))
					}
					target := s.path(v)
					req := httptest.NewRequest(s.method, target, body)
					if s.contentType != "" {
						req.Header.Set("Content-Type", s.contentType)
					}
					if s.key != "" {
						req.Header.Set(idempotency.HeaderKey, s.key)
					}
					if s.auth != nil {
						s.auth(req)
					} else {
						api.auth(req)
					}
					status, header, got := serve(h, req)
					require.Equal(t, s.want, status, "%s %s: %s", s.method, target, got)
					if s.replayed {
						require.Equal(t, "true", header.Get(idempotency.HeaderReplayed))
					}
					if s.save != nil {
						var m map[string]any
						require.NoError(t, json.Unmarshal(got, &m))
						s.save(v, m)
					}
					op := d.match(s.method, req.URL.Path)
					require.NotNil(t, op, "%s %s is not documented", s.method, req.URL.Path)
					d.checkAnswer(t, *op, status, header, got)
				})
				require.True(t, ok, "step %q failed; the later steps depend on it", s.name)
			}
		})
	}
}

// ---- requests ----

var keySeq atomic.Int64

func nextKey(prefix string) string { return fmt.Sprintf("%s-%d", prefix, keySeq.Add(1)) }

func serve(h http.Handler, req *http.Request) (int, http.Header, []byte) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header(), rec.Body.Bytes()
}

var wildcardRE = regexp.MustCompile(`\{([^}]+)\}`)

// placeholderRequest is the operation with "x" for every path parameter
// and the smallest body of its first documented media type.
func (o docOp) placeholderRequest(t *testing.T) *http.Request {
	t.Helper()
	path := wildcardRE.ReplaceAllString(o.path, "x")
	var body io.Reader
	contentType := ""
	if rb := asMap(o.d.resolve(o.op["requestBody"])); rb != nil {
		types := sortedKeys(asMap(rb["content"]))
		require.NotEmpty(t, types, "%s %s: requestBody without content", o.method, o.path)
		contentType = types[0]
		switch {
		case isJSON(contentType):
			body = strings.NewReader("{}")
		case contentType == "application/x-www-form-urlencoded":
			body = strings.NewReader("")
		default:
			t.Fatalf("%s %s: no placeholder body for %s", o.method, o.path, contentType)
		}
	}
	req := httptest.NewRequest(o.method, path, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// ---- the document ----

type openAPIDoc struct {
	file string
	root map[string]any
}

func loadDoc(t *testing.T, file string) *openAPIDoc {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var raw any
	require.NoError(t, yaml.Unmarshal(data, &raw), file)
	root, ok := normalize(raw).(map[string]any)
	require.True(t, ok, "%s: the document is not a mapping", file)
	return &openAPIDoc{file: file, root: root}
}

// normalize turns YAML mappings with non-string keys into map[string]any.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	}
	return v
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asSlice(v any) []any        { s, _ := v.([]any); return s }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pointer follows a local reference such as #/components/schemas/Hold.
func (d *openAPIDoc) pointer(ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	var cur any = d.root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m := asMap(cur)
		next, ok := m[tok]
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// resolve follows $ref chains.
func (d *openAPIDoc) resolve(v any) any {
	for range 32 {
		ref, ok := asMap(v)["$ref"].(string)
		if !ok {
			return v
		}
		if v, ok = d.pointer(ref); !ok {
			return nil
		}
	}
	return nil
}

func (d *openAPIDoc) checkRefs(t *testing.T, v any, at string) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			_, found := d.pointer(ref)
			require.True(t, found, "%s: %s: unresolvable $ref %q", d.file, at, ref)
		}
		for k, e := range x {
			d.checkRefs(t, e, at+"/"+k)
		}
	case []any:
		for i, e := range x {
			d.checkRefs(t, e, at+"/"+strconv.Itoa(i))
		}
	}
}

type docOp struct {
	d      *openAPIDoc
	method string // upper case
	path   string
	op     map[string]any
	params []map[string]any // path-level and operation-level, resolved
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func mutating(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch || method == http.MethodDelete
}

func (d *openAPIDoc) pathOperations(path string) []docOp {
	item := asMap(d.resolve(asMap(d.root["paths"])[path]))
	var out []docOp
	for _, m := range methods {
		op := asMap(item[m])
		if op == nil {
			continue
		}
		o := docOp{d: d, method: strings.ToUpper(m), path: path, op: op}
		// Operation parameters override path-level ones of the same name and location.
		seen := map[string]bool{}
		for _, p := range asSlice(op["parameters"]) {
			pm := asMap(d.resolve(p))
			seen[fmt.Sprint(pm["in"], ":", pm["name"])] = true
			o.params = append(o.params, pm)
		}
		for _, p := range asSlice(item["parameters"]) {
			pm := asMap(d.resolve(p))
			if !seen[fmt.Sprint(pm["in"], ":", pm["name"])] {
				o.params = append(o.params, pm)
			}
		}
		out = append(out, o)
	}
	return out
}

func (d *openAPIDoc) operations() []docOp {
	var out []docOp
	for _, p := range sortedKeys(asMap(d.root["paths"])) {
		out = append(out, d.pathOperations(p)...)
	}
	return out
}

func (d *openAPIDoc) operation(method, path string) *docOp {
	for _, o := range d.pathOperations(path) {
		if o.method == method {
			return &o
		}
	}
	return nil
}

// match finds the operation of a concrete request path, preferring the
// template with the most literal segments (as ServeMux prefers the most
// specific pattern).
func (d *openAPIDoc) match(method, path string) *docOp {
	segs := strings.Split(path, "/")
	best, bestScore := "", -1
	for tmpl := range asMap(d.root["paths"]) {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		score := 0
		for i := range ts {
			switch {
			case ts[i] == segs[i]:
				score++
			case wildcardRE.MatchString(ts[i]) && segs[i] != "":
			default:
				score = -1
			}
			if score < 0 {
				break
			}
		}
		if score > bestScore && d.operation(method, tmpl) != nil {
			best, bestScore = tmpl, score
		}
	}
	if best == "" {
		return nil
	}
	return d.operation(method, best)
}

// browserForm reports an operation marked x-browser-form: a customer's
// HTML form post (the hosted payment page), which cannot send an
// Idempotency-Key; the object's own state makes a repeat harmless.
func (o docOp) browserForm() bool { return o.op["x-browser-form"] == true }

func (o docOp) requiresIdempotencyKey() bool {
	for _, p := range o.params {
		if p["in"] == "header" && strings.EqualFold(fmt.Sprint(p["name"]), idempotency.HeaderKey) && p["required"] == true {
			return true
		}
	}
	return false
}

// secured reports whether the operation needs credentials: its effective
// security has a requirement and none of them is the empty (optional) one.
func (d *openAPIDoc) secured(o docOp) bool {
	sec, ok := o.op["security"]
	if !ok {
		sec = d.root["security"]
	}
	reqs := asSlice(sec)
	if len(reqs) == 0 {
		return false
	}
	for _, r := range reqs {
		if len(asMap(r)) == 0 {
			return false
		}
	}
	return true
}

// notableHeaders must be documented on any response that carries them.
var notableHeaders = []string{"Location", "Retry-After", idempotency.HeaderReplayed, "Request-Id", "WWW-Authenticate"}

// checkAnswer requires the answer to be documented for the operation: the
// status (or a default), the media type, the body's schema and the
// notable headers with their schemas.
func (d *openAPIDoc) checkAnswer(t *testing.T, o docOp, status int, header http.Header, body []byte) {
	t.Helper()
	where := fmt.Sprintf("%s: %s %s answered %d", d.file, o.method, o.path, status)
	responses := asMap(o.op["responses"])
	resp, ok := responses[strconv.Itoa(status)]
	if !ok {
		resp, ok = responses[strconv.Itoa(status/100)+"XX"]
	}
	if !ok {
		resp, ok = responses["default"]
	}
	require.True(t, ok, "%s, which is not documented (documented: %v); body %s", where, sortedKeys(responses), body)
	r := asMap(d.resolve(resp))

	documented := asMap(r["headers"])
	for _, name := range notableHeaders {
		value := header.Get(name)
		if value == "" {
			continue
		}
		var hdr any
		for k, h := range documented {
			if strings.EqualFold(k, name) {
				hdr = d.resolve(h)
			}
		}
		require.NotNil(t, hdr, "%s with header %s: %s, which the response does not document", where, name, value)
		schema := asMap(hdr)["schema"]
		var v any = value
		if slices.Contains(schemaTypes(asMap(d.resolve(schema))), "integer") {
			v = json.Number(value)
		}
		require.Empty(t, d.validate(schema, v, "header "+name), "%s: header %s: %s", where, name, value)
	}

	if len(body) == 0 {
		return
	}
	content := asMap(r["content"])
	require.NotEmpty(t, content, "%s with a body, but documents none: %s", where, body)
	mt, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	require.NoError(t, err, "%s: Content-Type %q", where, header.Get("Content-Type"))
	media, ok := content[mt]
	require.True(t, ok, "%s with %s, documented: %v", where, mt, sortedKeys(content))
	schema, hasSchema := asMap(media)["schema"]
	if !hasSchema || !isJSON(mt) {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "%s: body is not JSON: %s", where, body)
	errs := d.validate(schema, v, "$")
	require.Empty(t, errs, "%s: the body does not match the documented schema:\n%s\nbody: %s", where, strings.Join(errs, "\n"), body)
}

func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// ---- a small JSON Schema (2020-12 subset) validator ----
//
// It understands $ref, type, const, enum, anyOf, oneOf, properties,
// required, additionalProperties, items, format date-time, pattern,
// minLength, maxLength, minimum and maximum, and rejects allOf. It is
// stricter than JSON Schema in one way, to catch drift: an object schema
// with properties but no additionalProperties accepts no other members.

func schemaTypes(s map[string]any) []string {
	switch x := s["type"].(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// scalar makes YAML and JSON scalars comparable.
func scalar(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return v
}

func number(v any) (float64, bool) {
	f, ok := scalar(v).(float64)
	return f, ok
}

func (d *openAPIDoc) validate(schema, v any, at string) []string {
	s := asMap(d.resolve(schema))
	if s == nil {
		return nil // no constraints
	}
	if _, ok := s["allOf"]; ok {
		return []string{at + ": allOf is not supported by this test's validator"}
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }

	if types := schemaTypes(s); types != nil {
		got := jsonType(v)
		if !slices.Contains(types, got) && !(got == "integer" && slices.Contains(types, "number")) {
			fail("is %s, want %v", got, types)
			return errs
		}
	}
	if c, ok := s["const"]; ok && !reflect.DeepEqual(scalar(c), scalar(v)) {
		fail("is %v, want const %v", v, c)
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(scalar(e), scalar(v)) }) {
		fail("is %v, want one of %v", v, enum)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		branches, ok := s[kw].([]any)
		if !ok {
			continue
		}
		matched := 0
		var why []string
		for i, b := range branches {
			if e := d.validate(b, v, fmt.Sprintf("%s(%s[%d])", at, kw, i)); len(e) == 0 {
				matched++
			} else {
				why = append(why, e...)
			}
		}
		if matched == 0 || (kw == "oneOf" && matched > 1) {
			fail("matches %d of the %s branches: %s", matched, kw, strings.Join(why, "; "))
		}
	}

	switch x := v.(type) {
	case string:
		if s["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339, x); err != nil {
				fail("is not an RFC 3339 date-time: %q", x)
			}
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			fail("%q does not match %s", x, p)
		}
		if n, ok := number(s["minLength"]); ok && float64(len([]rune(x))) < n {
			fail("is shorter than %v", n)
		}
		if n, ok := number(s["maxLength"]); ok && float64(len([]rune(x))) > n {
			fail("is longer than %v", n)
		}
	case json.Number:
		f, _ := number(x)
		if n, ok := number(s["minimum"]); ok && f < n {
			fail("%v is below the minimum %v", f, n)
		}
		if n, ok := number(s["maximum"]); ok && f > n {
			fail("%v is above the maximum %v", f, n)
		}
		if math.IsNaN(f) {
			fail("is not a number")
		}
	case []any:
		if items, ok := s["items"]; ok {
			for i, e := range x {
				errs = append(errs, d.validate(items, e, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case map[string]any:
		for _, r := range asSlice(s["required"]) {
			if _, ok := x[fmt.Sprint(r)]; !ok {
				fail("lacks the required member %q", r)
			}
		}
		props := asMap(s["properties"])
		additional, hasAdditional := s["additionalProperties"]
		for _, k := range sortedKeys(x) {
			if ps, ok := props[k]; ok {
				errs = append(errs, d.validate(ps, x[k], at+"."+k)...)
				continue
			}
			switch {
			case hasAdditional && additional == false:
				fail("has the member %q, which additionalProperties: false forbids", k)
			case hasAdditional && additional != true:
				errs = append(errs, d.validate(additional, x[k], at+"."+k)...)
			case !hasAdditional && props != nil:
				fail("has the undocumented member %q", k)
			}
		}
	}
	return errs
}

// ---- route registrations in the Go source ----

type route struct {
	pattern    string // as registered, e.g. "POST /v1/holds/{id}/confirm"
	method     string // "" for patterns without a method
	path       string // OpenAPI form: wildcards as {name}
	idempotent bool   // registered through the idempotency middleware
	handler    string // the method registered, e.g. "createHold"; "" for a func literal
	pos        string
}

// goPackage is the parsed non-test Go files of one directory.
type goPackage struct {
	dir    string
	fset   *token.FileSet
	files  []*ast.File
	consts map[string]string // package string constants
}

func loadPackage(t *testing.T, dir string) *goPackage {
	t.Helper()
	pkg := &goPackage{dir: dir, fset: token.NewFileSet()}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(pkg.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		pkg.files = append(pkg.files, f)
	}
	pkg.consts = stringConstants(pkg.files)
	return pkg
}

// method returns the method declared with name (on any receiver): a
// package may have a function of the same name (payments.getIntent).
func (p *goPackage) method(name string) *ast.FuncDecl {
	for _, f := range p.files {
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == name && fn.Body != nil {
				return fn
			}
		}
	}
	return nil
}

// registeredRoutes finds, in the non-test Go files of dirs, every pattern
// registered on a ServeMux created by http.NewServeMux in the same
// function: direct mux.Handle/mux.HandleFunc calls, and calls of local
// helpers (func literals such as idem) whose body registers their first
// argument. Patterns may be string literals or package string constants.
func registeredRoutes(t *testing.T, dirs ...string) []route {
	t.Helper()
	var out []route
	for _, dir := range dirs {
		out = append(out, loadPackage(t, dir).routes(t)...)
	}
	return out
}

func (p *goPackage) routes(t *testing.T) []route {
	t.Helper()
	var out []route
	for _, f := range p.files {
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				out = append(out, registrationsIn(t, p.fset, fn.Body, p.consts)...)
			}
		}
	}
	return out
}

func stringConstants(files []*ast.File) map[string]string {
	consts := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							consts[name.Name] = s
						}
					}
				}
			}
		}
	}
	return consts
}

// wrapper is a local helper such as idem := func(op string, h ...) { mux.Handle(op, ...) }.
type wrapper struct {
	lit        *ast.FuncLit
	idempotent bool
}

func registrationsIn(t *testing.T, fset *token.FileSet, body *ast.BlockStmt, consts map[string]string) []route {
	t.Helper()
	muxes := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for i, rhs := range as.Rhs {
				if isCallTo(rhs, "http", "NewServeMux") && i < len(as.Lhs) {
					if id, ok := as.Lhs[i].(*ast.Ident); ok {
						muxes[id.Name] = true
					}
				}
			}
		}
		return true
	})
	if len(muxes) == 0 {
		return nil
	}
	isRegistration := func(call *ast.CallExpr) bool {
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") || len(call.Args) != 2 {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && muxes[x.Name]
	}

	wrappers := map[string]wrapper{}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		name, ok1 := as.Lhs[0].(*ast.Ident)
		lit, ok2 := as.Rhs[0].(*ast.FuncLit)
		if !ok1 || !ok2 || len(lit.Type.Params.List) == 0 || len(lit.Type.Params.List[0].Names) == 0 {
			return true
		}
		param := lit.Type.Params.List[0].Names[0].Name
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if ok && isRegistration(call) {
				if id, ok := call.Args[0].(*ast.Ident); ok && id.Name == param {
					wrappers[name.Name] = wrapper{lit: lit, idempotent: callsMiddleware(call.Args[1])}
				}
			}
			return true
		})
		return true
	})

	var out []route
	add := func(call *ast.CallExpr, idempotent bool) {
		pos := fset.Position(call.Pos()).String()
		var pattern string
		switch a := call.Args[0].(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(a.Value)
			require.NoError(t, err, pos)
			pattern = s
		case *ast.Ident:
			s, ok := consts[a.Name]
			require.True(t, ok, "%s: route pattern %s is not a string constant of the package; teach this test to resolve it", pos, a.Name)
			pattern = s
		default:
			t.Fatalf("%s: cannot resolve the route pattern expression %T; teach this test to resolve it", pos, a)
		}
		r := parsePattern(t, pattern, idempotent, pos)
		if sel, ok := call.Args[1].(*ast.SelectorExpr); ok {
			r.handler = sel.Sel.Name
		}
		out = append(out, r)
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			for _, w := range wrappers {
				if w.lit == x {
					return false // the helper's own registration of its parameter
				}
			}
		case *ast.CallExpr:
			if isRegistration(x) {
				add(x, callsMiddleware(x.Args[1]))
			} else if id, ok := x.Fun.(*ast.Ident); ok && len(x.Args) > 0 {
				if w, ok := wrappers[id.Name]; ok {
					add(x, w.idempotent)
				}
			}
		}
		return true
	})
	return out
}

func isCallTo(e ast.Expr, pkg, fn string) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg && sel.Sel.Name == fn
}

// callsMiddleware reports whether e wraps a handler in X.Middleware(...),
// the idempotency middleware.
func callsMiddleware(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Middleware" {
				found = true
			}
		}
		return !found
	})
	return found
}

var goWildcardRE = regexp.MustCompile(`\{([^}.]*)(\.\.\.)?\}`)

// parsePattern splits a ServeMux pattern "[METHOD ][HOST]/PATH" and turns
// its wildcards into OpenAPI templating: {id} and {path...} become {id}
// and {path}; {$} (end anchor) disappears.
func parsePattern(t *testing.T, pattern string, idempotent bool, pos string) route {
	t.Helper()
	r := route{pattern: pattern, idempotent: idempotent, pos: pos}
	rest := pattern
	if m, p, ok := strings.Cut(strings.TrimSpace(pattern), " "); ok {
		r.method, rest = m, strings.TrimLeft(p, " \t")
	}
	i := strings.IndexByte(rest, '/')
	require.GreaterOrEqual(t, i, 0, "%s: pattern %q has no path", pos, pattern)
	r.path = goWildcardRE.ReplaceAllStringFunc(rest[i:], func(w string) string {
		name := goWildcardRE.FindStringSubmatch(w)[1]
		if name == "$" {
			return ""
		}
		return "{" + name + "}"
	})
	return r
}
