package api_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/payments/stripeapi"
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
		sources: []string{"../payments/stripeapi", "../internal/web"},
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
	srv := &stripeapi.Server{
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
