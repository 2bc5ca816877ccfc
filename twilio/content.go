package twilio

import (
	"regexp"
	"strconv"
)

// Twilio's Content API: a template is named by a content SID ("HX" and
// 32 hex digits) and its text has numbered placeholders ("{{1}}"), which
// ContentVariables fill. bookonce's tenants configuration checks templates
// with these, and renders them as Twilio does; the fake serves them.

var (
	contentSID  = regexp.MustCompile(`^HX[0-9a-fA-F]{32}$`)
	placeholder = regexp.MustCompile(`\{\{\s*([0-9]+)\s*\}\}`)
)

// ValidContentSID reports whether sid has the shape of a content SID.
func ValidContentSID(sid string) bool { return contentSID.MatchString(sid) }

// RenderContent fills text's numbered placeholders from vars, as Twilio
// renders a content template into the message's body; ok is false when a
// placeholder has no value.
func RenderContent(text string, vars map[string]string) (out string, ok bool) {
	ok = true
	out = placeholder.ReplaceAllStringFunc(text, func(p string) string {
		n := placeholder.FindStringSubmatch(p)[1]
		v, found := vars[n]
		if !found {
			ok = false
		}
		return v
	})
	return out, ok
}

// Placeholders returns the numbers of text's placeholders in order, each
// once ("Am {{2}}, {{1}}" gives [2 1]).
func Placeholders(text string) []int {
	var out []int
	seen := map[int]bool{}
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
