package api_test

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/bookonce/bookonce/idempotency"
)

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

// mutating reports whether a method needs an Idempotency-Key: POST and
// PATCH, which HTTP does not make idempotent (RFC 9110 9.2.2; the
// Idempotency-Key draft is for them). A PUT or DELETE is idempotent by
// itself: sending it again is the same state.
func mutating(method string) bool {
	return method == http.MethodPost || method == http.MethodPatch
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
