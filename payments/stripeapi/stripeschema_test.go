package stripeapi_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// schemaNode is the part of an OpenAPI 3.0 schema the checks read.
type schemaNode struct {
	Ref                  string                 `json:"$ref"`
	AnyOf                []*schemaNode          `json:"anyOf"`
	Type                 string                 `json:"type"`
	Enum                 []any                  `json:"enum"`
	Nullable             bool                   `json:"nullable"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	Items                *schemaNode            `json:"items"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
}

// unconstrained reports a schema that allows any value.
func (n *schemaNode) unconstrained() bool {
	return n.Ref == "" && len(n.AnyOf) == 0 && n.Type == "" && len(n.Properties) == 0 && n.Items == nil && len(n.Enum) == 0 &&
		len(n.AdditionalProperties) == 0
}

// stripeSchemas checks JSON values against Stripe's definition.
type stripeSchemas map[string]json.RawMessage

func (s stripeSchemas) node(name string) (*schemaNode, error) {
	raw, ok := s[name]
	if !ok {
		return nil, fmt.Errorf("no schema %q in Stripe's definition", name)
	}
	var n schemaNode
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("schema %q: %w", name, err)
	}
	return &n, nil
}

// violations lists where v departs from the schema name, each as
// "path: what".
func (s stripeSchemas) violations(name string, v any) []string {
	n, err := s.node(name)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	s.check(n, v, name, &out)
	sort.Strings(out)
	return out
}

func (s stripeSchemas) check(n *schemaNode, v any, path string, out *[]string) {
	if n.unconstrained() {
		return // {} or additionalProperties: true: anything goes
	}
	if n.Ref != "" {
		r, err := s.node(strings.TrimPrefix(n.Ref, "#/components/schemas/"))
		if err != nil {
			*out = append(*out, path+": "+err.Error())
			return
		}
		n = r
	}
	if v == nil {
		if !n.Nullable {
			*out = append(*out, path+": null where Stripe never sends null")
		}
		return
	}
	if len(n.AnyOf) > 0 {
		// The closest alternative's departures say what is wrong (an
		// expanded object that departs from the object's schema).
		var closest []string
		for i, alt := range n.AnyOf {
			var errs []string
			s.check(alt, v, path, &errs)
			if len(errs) == 0 {
				return
			}
			if i == 0 || len(errs) < len(closest) {
				closest = errs
			}
		}
		*out = append(*out, closest...)
		return
	}
	s.checkTyped(n, v, path, out)
}

func (s stripeSchemas) checkTyped(n *schemaNode, v any, path string, out *[]string) {
	bad := func(want string) {
		*out = append(*out, fmt.Sprintf("%s: %s where Stripe sends %s", path, kindOf(v), want))
	}
	switch n.Type {
	case "string":
		str, ok := v.(string)
		if !ok {
			bad("a string")
		} else if len(n.Enum) > 0 && !slices.Contains(n.Enum, any(str)) {
			*out = append(*out, fmt.Sprintf("%s: %q is not one of Stripe's values", path, str))
		}
	case "integer":
		if f, ok := v.(float64); !ok || f != math.Trunc(f) {
			bad("an integer")
		}
	case "number":
		if _, ok := v.(float64); !ok {
			bad("a number")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("a boolean")
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			bad("an array")
			return
		}
		for i, item := range arr {
			if n.Items != nil {
				s.check(n.Items, item, fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
	case "object", "":
		obj, ok := v.(map[string]any)
		if !ok {
			if n.Type == "object" {
				bad("an object")
			}
			return
		}
		s.checkObject(n, obj, path, out)
	}
}

func (s stripeSchemas) checkObject(n *schemaNode, obj map[string]any, path string, out *[]string) {
	for _, r := range n.Required {
		if _, ok := obj[r]; !ok {
			*out = append(*out, path+"."+r+": missing, Stripe always sends it")
		}
	}
	var extra *schemaNode
	if len(n.AdditionalProperties) > 0 && string(n.AdditionalProperties) != "false" {
		extra = &schemaNode{}
		if string(n.AdditionalProperties) != "true" {
			if err := json.Unmarshal(n.AdditionalProperties, extra); err != nil {
				*out = append(*out, path+": additionalProperties: "+err.Error())
			}
		}
	}
	for k, val := range obj {
		p, ok := n.Properties[k]
		switch {
		case ok:
			s.check(p, val, path+"."+k, out)
		case extra != nil:
			s.check(extra, val, path+"."+k, out)
		default:
			*out = append(*out, path+"."+k+": not a field of Stripe's object")
		}
	}
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
