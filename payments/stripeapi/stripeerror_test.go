package stripeapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
)

// stripeErrorShape is Stripe's error object (components.schemas.api_errors
// of Stripe's OpenAPI definition): its fields, each a "string" or an
// "object", the error types it allows and the fields it requires.
type stripeErrorShape struct {
	kinds    map[string]string
	types    []string
	required []string
}

var (
	errorShapeOnce sync.Once
	errorShape     *stripeErrorShape
	errorShapeErr  error
)

// stripeErrorShapeOf reads the shape once; nil where the definition
// cannot be had (the checks that need it are then skipped).
func stripeErrorShapeOf() (*stripeErrorShape, error) {
	errorShapeOnce.Do(func() {
		schemas, err := testsupport.LoadStripeSchemas()
		if err != nil {
			errorShapeErr = err
			return
		}
		var def struct {
			Required   []string `json:"required"`
			Properties map[string]struct {
				Type string   `json:"type"`
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(schemas["api_errors"], &def); err != nil || len(def.Properties) == 0 {
			errorShapeErr = fmt.Errorf("api_errors in Stripe's definition: %v", err)
			return
		}
		sh := &stripeErrorShape{kinds: map[string]string{}, required: def.Required}
		for name, p := range def.Properties {
			sh.kinds[name] = "object" // a $ref or anyOf of objects
			if p.Type == "string" {
				sh.kinds[name] = "string"
			}
			if name == "type" {
				sh.types = p.Enum
			}
		}
		errorShape = sh
	})
	return errorShape, errorShapeErr
}

// requireStripeError checks an error answer against Stripe's definition:
// {"error": {...}} and nothing beside it; a type Stripe has; only fields
// Stripe's error object has, each of its kind; the required ones present.
// Every error the payment API's tests provoke goes through it (env.do).
func requireStripeError(t require.TestingT, body []byte) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	sh, err := stripeErrorShapeOf()
	if err != nil {
		return // no definition on this machine: TestErrorsAreStripesShape says so
	}
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &doc))
	require.Len(t, doc, 1, "an error answer is {\"error\": …} alone: %s", body)
	var e map[string]any
	require.NoError(t, json.Unmarshal(doc["error"], &e), "%s", body)
	for _, f := range sh.required {
		require.Contains(t, e, f, "Stripe's error always has %q: %s", f, body)
	}
	require.True(t, slices.Contains(sh.types, fmt.Sprint(e["type"])), "error type %v is not one of Stripe's %v", e["type"], sh.types)
	for name, v := range e {
		kind, ok := sh.kinds[name]
		require.True(t, ok, "Stripe's error object has no field %q: %s", name, body)
		switch kind {
		case "string":
			require.IsType(t, "", v, "%s is a string in Stripe's error: %s", name, body)
		default:
			require.IsType(t, map[string]any{}, v, "%s is an object in Stripe's error: %s", name, body)
		}
	}
}

// TestErrorsAreStripesShape: the shape is read from Stripe's definition,
// and a body Stripe would not send is refused by the check, so the check
// that every other test's errors pass through can fail.
func TestErrorsAreStripesShape(t *testing.T) {
	testsupport.StripeSchemas(t) // skips, saying why, without the definition
	sh, err := stripeErrorShapeOf()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"api_error", "card_error", "idempotency_error", "invalid_request_error"}, sh.types)
	requireStripeError(t, []byte(`{"error":{"type":"card_error","code":"card_declined","decline_code":"generic_decline","message":"Your card was declined.","payment_intent":{"id":"pi_1"}}}`))
	for _, bad := range []string{
		`{"error":{"type":"payment_error","message":"m"}}`,
		`{"error":{"type":"invalid_request_error","message":"m","field":"amount"}}`,
		`{"error":{"type":"invalid_request_error","message":"m"},"status":400}`,
		`{"error":{"message":"m"}}`,
		`{"error":{"type":"card_error","message":"m","payment_intent":"pi_1"}}`,
	} {
		ft := &fakeT{}
		func() {
			defer func() { _ = recover() }() // fakeT.FailNow panics
			requireStripeError(ft, []byte(bad))
		}()
		require.True(t, ft.failed, "the check let through %s", bad)
	}
}

// fakeT records a failure instead of failing the test; FailNow stops
// the check as require does, by a panic the caller recovers.
type fakeT struct{ failed bool }

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) FailNow()              { f.failed = true; panic("failed") }
