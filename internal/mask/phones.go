// Package mask masks customers' phone numbers wherever text leaves the
// system for people: logs, the ops page, workflow summaries started here,
// drill and benchmark reports. One format everywhere, so a masked number
// is recognised (and grepped for) the same way in each of them.
package mask

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// e164 finds E.164 numbers (as Twilio sends them, also inside
// "whatsapp:+49…" and workflow IDs such as "customer:t:+49…"), also
// URL-escaped in a query or form value ("%2B49…").
var e164 = regexp.MustCompile(`(?:\+|%2[Bb])[1-9][0-9]{6,14}`)

// Phones masks every E.164 phone number in s, keeping the country code and
// the last two digits: "+4915112345678" -> "+49·········78"; a URL-escaped
// one ("%2B4915112345678") is masked the same way. Masking masked text
// changes nothing. Logs, traces and the CustomerMasked search attribute
// all use it, so a masked number looks the same everywhere.
func Phones(s string) string {
	return e164.ReplaceAllStringFunc(s, maskNumber)
}

func maskNumber(n string) string {
	if strings.HasPrefix(n, "%") {
		n = "+" + n[3:]
	}
	digits := n[1:]
	cc := ""
	if num, err := phonenumbers.Parse(n, ""); err == nil && num.GetCountryCode() != 0 {
		cc = strconv.Itoa(int(num.GetCountryCode()))
	}
	if cc == "" || !strings.HasPrefix(digits, cc) {
		cc = digits[:1] // unknown country code: keep only the first digit
	}
	hidden := max(len(digits)-len(cc)-2, 1)
	return "+" + cc + strings.Repeat("·", hidden) + digits[len(digits)-2:]
}
