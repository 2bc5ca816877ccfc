package tenants_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/tenants"
)

// valid is a small correct file; the cases below break one line of it.
// Line numbers matter: the first tenant starts on line 2.
const valid = `tenants:
  - id: acme
    name: Acme
    api_token_sha256: [` + digestA + `]
    twilio_numbers: ["whatsapp:+4940111111"]
    timezone: Europe/Berlin
    language: de
    resources:
      - id: lift-1
        name: Lift 1
        kind: bay
        hours: {mon-fri: 08:00-17:00}
    services:
      - id: wash
        name: Wash
        duration: 20m
        resources: [lift-1]
        deposit: {amount: 500, currency: EUR}
        synonyms: {de: [Wäsche], en: [wash]}
`

const (
	digestA = "1111111111111111111111111111111111111111111111111111111111111111"
	digestB = "2222222222222222222222222222222222222222222222222222222222222222"
)

func TestParseAcceptsAndNormalises(t *testing.T) {
	f, err := tenants.Parse("tenants.yaml", []byte(valid))
	require.NoError(t, err)
	require.Len(t, f.Tenants, 1)
	acme := f.Tenants[0]
	require.Equal(t, []string{"+4940111111"}, acme.Numbers, "the whatsapp: prefix names the same number")
	require.Equal(t, tenants.Money{Amount: 500, Currency: "eur"}, acme.Services[0].Deposit, "currencies as the payment API takes them")
	require.Len(t, acme.Resources[0].Hours, 5)
	require.Equal(t, tenants.Interval{Opens: "08:00", Closes: "17:00"}, acme.Resources[0].Hours[5])

	withKeywords := strings.Replace(valid, "language: de", "language: de\n    policies: {opt_out_keywords: [Stop, \"halt!\"], opt_in_keywords: [weiter]}", 1)
	f, err = tenants.Parse("tenants.yaml", []byte(withKeywords))
	require.NoError(t, err)
	require.Equal(t, []string{"STOP", "HALT"}, f.Tenants[0].Policies.OptOutKeywords, "as consent.Match compares them")
	require.Equal(t, []string{"WEITER"}, f.Tenants[0].Policies.OptInKeywords)
}

func TestParseRejectsWithLineAndField(t *testing.T) {
	cases := []struct {
		name, old, new string
		want           string
	}{
		{"currency", "currency: EUR", "currency: EURO",
			"tenants.yaml:18: tenants[0].services[0].deposit.currency: must be a 3-letter ISO code such as eur"},
		{"unknown key", "    timezone: Europe/Berlin", "    timezone: Europe/Berlin\n    timezon: x",
			"tenants.yaml:7: tenants[0].timezon: unknown key"},
		{"timezone", "Europe/Berlin", "Europe/Bärlin", "tenants.yaml:6: tenants[0].timezone: unknown time zone"},
		{"language", "language: de", "language: fr", "tenants.yaml:7: tenants[0].language: must be one of de, en"},
		{"number", "whatsapp:+4940111111", "040 111111", "tenants.yaml:5: tenants[0].twilio_numbers[0]: must be an E.164 number"},
		{"digest length", digestA, digestA[:63], "tenants.yaml:4: tenants[0].api_token_sha256[0]: must be a hex SHA-256 digest of 64 characters"},
		{"plain token", digestA, "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI", "tenants.yaml:4: tenants[0].api_token_sha256[0]: must be a hex SHA-256 digest"},
		{"unknown resource", "resources: [lift-1]", "resources: [lift-1, lift-2]",
			`tenants.yaml:17: tenants[0].services[0].resources[1]: no resource "lift-2" in this tenant`},
		{"duration", "duration: 20m", "duration: -5m", "tenants.yaml:16: tenants[0].services[0].duration: must be positive"},
		{"duration text", "duration: 20m", "duration: twenty", "tenants.yaml:16: tenants[0].services[0].duration: must be a duration"},
		{"deposit", "amount: 500", "amount: 0", "tenants.yaml:18: tenants[0].services[0].deposit.amount: must be between 1"},
		{"hours", "mon-fri: 08:00-17:00", "mon-fri: 17:00-08:00", "tenants.yaml:12: tenants[0].resources[0].hours.mon: must close after it opens"},
		{"weekday", "mon-fri: 08:00-17:00", "monday: 08:00-17:00", "tenants.yaml:12: tenants[0].resources[0].hours.monday: must be a weekday"},
		{"kind", "kind: bay", "kind: robot", "tenants.yaml:11: tenants[0].resources[0].kind: must be bay or technician"},
		{"missing id", "      - id: wash\n", "      - \n", "tenants.yaml:15: tenants[0].services[0].id: missing"},
		{"synonyms", "synonyms: {de: [Wäsche], en: [wash]}", "synonyms: {en: [wash]}",
			`tenants.yaml:19: tenants[0].services[0].synonyms: needs at least one name in the tenant's language "de"`},
		{"template name", "language: de", "language: de\n    templates: {de: {confirmaton: hi}}",
			"tenants.yaml:8: tenants[0].templates.de.confirmaton: unknown template"},
		{"template syntax", "language: de", "language: de\n    templates: {de: {confirmation: \"{{.Service\"}}",
			"tenants.yaml:8: tenants[0].templates.de.confirmation: template does not work"},
		{"template field", "language: de", "language: de\n    templates: {en: {confirmation: \"{{.Price}}\"}}",
			"tenants.yaml:8: tenants[0].templates.en.confirmation: template does not work"},
		{"closed day", "hours: {mon-fri: 08:00-17:00}", "hours: {mon-fri: 08:00-17:00}\n        closed_days: [2026-02-30]",
			`tenants.yaml:13: tenants[0].resources[0].closed_days[0]: must be a date such as 2026-12-24, got "2026-02-30"`},
		{"duplicate service", "        synonyms: {de: [Wäsche], en: [wash]}\n",
			"        synonyms: {de: [Wäsche], en: [wash]}\n      - {id: wash, name: W, duration: 5m, resources: [lift-1], deposit: {amount: 1, currency: eur}, synonyms: {de: [W]}}\n",
			`tenants.yaml:20: tenants[0].services[1].id: service "wash" is already declared at line 14`},
		{"opt-out keyword of two words", "language: de", "language: de\n    policies: {opt_out_keywords: [STOP, bitte aufhören]}",
			`tenants.yaml:8: tenants[0].policies.opt_out_keywords[1]: must be one word, got "BITTE AUFHÖREN"`},
		{"a keyword both stop and start", "language: de", "language: de\n    policies: {opt_in_keywords: [start, stopp]}",
			`tenants.yaml:8: tenants[0].policies.opt_in_keywords[1]: "STOPP" is also an opt-out keyword`},
		{"caller links", "language: de", "language: de\n    policies: {caller_links: fax}",
			`tenants.yaml:8: tenants[0].policies.caller_links: must be whatsapp or sms, got "fax"`},
		{"not yaml", "name: Acme", "name: [Acme", "tenants.yaml: not valid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Contains(t, valid, c.old, "the case must change the file")
			_, err := tenants.Parse("tenants.yaml", []byte(strings.Replace(valid, c.old, c.new, 1)))
			var verr *tenants.ValidationError
			require.ErrorAs(t, err, &verr)
			require.True(t, errors.Is(err, tenants.ErrRejected))
			require.Contains(t, err.Error(), c.want)
		})
	}
}

// Across tenants: a number and a token belong to one tenant only, and
// tenant IDs are unique; every problem of the file is reported at once.
func TestParseRejectsSharedNumbersAndTokens(t *testing.T) {
	second := `  - id: acme
    name: Acme 2
    api_token_sha256: [` + strings.ToUpper(digestA) + `, ` + digestB + `]
    twilio_numbers: ["+4940111111"]
    timezone: Europe/Vienna
    language: en
`
	_, err := tenants.Parse("tenants.yaml", []byte(valid+second))
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, `tenants.yaml:20: tenants[1].id: tenant "acme" is already declared at line 2`)
	require.Contains(t, msg, `tenants.yaml:22: tenants[1].api_token_sha256[0]: token digest already belongs to tenant "acme" (line 4)`)
	require.Contains(t, msg, `tenants.yaml:23: tenants[1].twilio_numbers[0]: number already belongs to tenant "acme" (line 5)`)
}
