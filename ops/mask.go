package ops

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// phoneRE finds E.164 numbers (as Twilio sends them, also inside
// "whatsapp:+49…" and workflow IDs such as "customer:t:+49…").
var phoneRE = regexp.MustCompile(`\+[1-9][0-9]{6,14}`)

// MaskPhones masks every E.164 phone number in s, keeping the country code
// and the last two digits: "+4915112345678" -> "+49\u00a0·········78"
// (a no-break space, so the masked number never wraps).
func MaskPhones(s string) string {
	return phoneRE.ReplaceAllStringFunc(s, maskPhone)
}

func maskPhone(n string) string {
	digits := n[1:]
	cc := ""
	if num, err := phonenumbers.Parse(n, ""); err == nil && num.GetCountryCode() != 0 {
		cc = strconv.Itoa(int(num.GetCountryCode()))
	}
	if cc == "" || !strings.HasPrefix(digits, cc) {
		cc = digits[:1] // unknown country code: keep only the first digit
	}
	hidden := len(digits) - len(cc) - 2
	if hidden < 1 {
		hidden = 1
	}
	return "+" + cc + "\u00a0" + strings.Repeat("·", hidden) + digits[len(digits)-2:]
}

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
			out = append(out, detail{Key: prefix, Value: MaskPhones(s)})
		}
	}
	walk("", v)
	if len(out) > max {
		more := len(out) - max
		out = append(out[:max], detail{Key: "…", Value: fmt.Sprintf("%d more", more)})
	}
	return out
}
