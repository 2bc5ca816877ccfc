package ops

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/bookonce/bookonce/internal/mask"
)

type detail struct{ Key, Value string }

// summarize flattens a case's details JSON into at most max "key: value"
// pairs, values shortened and phone numbers masked.
func summarize(raw json.RawMessage, max int) []detail {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []detail
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, x[k])
			}
		case nil:
		default:
			var s string
			switch y := x.(type) {
			case string:
				s = y
			case []any, bool, float64:
				b, _ := json.Marshal(y)
				s = string(b)
			default:
				s = fmt.Sprint(y)
			}
			if s == "" || s == "false" || s == "0" {
				return
			}
			if r := []rune(s); len(r) > 90 {
				s = string(r[:89]) + "…"
			}
			out = append(out, detail{Key: prefix, Value: mask.Phones(s)})
		}
	}
	walk("", v)
	if len(out) > max {
		more := len(out) - max
		out = append(out[:max], detail{Key: "…", Value: fmt.Sprintf("%d more", more)})
	}
	return out
}
