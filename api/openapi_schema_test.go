package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
)

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
