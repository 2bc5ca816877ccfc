package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/testsupport"
)

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
					send := func(auth, key bool, from ...string) (int, http.Header, []byte) {
						req := op.placeholderRequest(t)
						if len(from) > 0 {
							req.RemoteAddr = from[0]
						}
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

					// Each probe without credentials comes from an address of
					// its own: the failed-authentication limit per address
					// (tested in internal/web) would answer 429 after ten.
					status, header, body = send(false, true, nextAddr())
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
				body: str("url=https://example.com/hook&enabled_events[]=*"),
				save: func(v vars, b map[string]any) { v["we"] = b["id"].(string) }},
			{name: "disable webhook endpoint", method: "POST", path: func(v vars) string { return "/v1/webhook_endpoints/" + v["we"] },
				contentType: form, key: "p-we-off", want: 200, body: str("disabled=true")},
			{name: "retrieve webhook endpoint", method: "GET", path: func(v vars) string { return "/v1/webhook_endpoints/" + v["we"] }, want: 200},
			{name: "enable webhook endpoint", method: "POST", path: func(v vars) string { return "/v1/webhook_endpoints/" + v["we"] },
				contentType: form, key: "p-we-on", want: 200, body: str("disabled=false")},
			{name: "unknown webhook endpoint", method: "GET", path: str("/v1/webhook_endpoints/we_nope"), want: 404},
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

// probes numbers the client addresses of nextAddr.
var probes atomic.Int64

// nextAddr is a client address no other probe used (198.18.0.0/15, the
// benchmarking range).
func nextAddr() string {
	n := probes.Add(1)
	return fmt.Sprintf("198.18.%d.%d:40000", n/256, n%256)
}

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
