package tenants

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	// idPattern keeps IDs safe inside workflow IDs ("customer:<tenant>:…"),
	// URLs and log lines.
	idPattern     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	e164Pattern   = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	sha256Pattern = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	currencyCode  = regexp.MustCompile(`^[A-Za-z]{3}$`)
	clockPattern  = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
)

// Resource kinds the calendar knows.
var resourceKinds = []string{"bay", "technician"}

// maxDeposit is the payment API's largest amount.
const maxDeposit = 99999999

// validator collects the problems of one File.
type validator struct {
	f        File
	problems []Problem
}

// Validate checks a File: unique IDs, E.164 numbers no two tenants share,
// digests of 64 hex digits, loadable time zones, supported languages,
// services that name existing resources, positive durations, deposits the
// payment API takes, and templates that parse and execute. Every problem
// is returned at once in a *ValidationError.
func Validate(f File) error {
	v := &validator{f: f}
	tenantIDs := map[string]string{}
	numbers := map[string]string{}
	tokens := map[string]string{}
	for i, t := range f.Tenants {
		p := index("tenants", i)
		v.id(join(p, "id"), t.ID, "tenant", tenantIDs)
		v.nonEmpty(join(p, "name"), t.Name)
		for j, h := range t.TokenHashes {
			hp := index(join(p, "api_token_sha256"), j)
			if !sha256Pattern.MatchString(h) {
				v.fail(hp, "must be a hex SHA-256 digest of 64 characters (printf %%s TOKEN | sha256sum), never the token itself")
				continue
			}
			v.unique(hp, strings.ToLower(h), i, t.ID, tokens, "token digest")
		}
		for j, n := range t.Numbers {
			np := index(join(p, "twilio_numbers"), j)
			e := NormaliseNumber(n)
			if !e164Pattern.MatchString(e) {
				v.fail(np, "must be an E.164 number such as +4930123456 (optionally whatsapp:+4930123456), got %q", n)
				continue
			}
			v.unique(np, e, i, t.ID, numbers, "number")
		}
		v.timezone(join(p, "timezone"), t.Timezone)
		if !supported(t.Language) {
			v.fail(join(p, "language"), "must be one of %s, got %q", languageList(), t.Language)
		}
		v.tenantParts(p, t)
	}
	if len(v.problems) == 0 {
		return nil
	}
	sort.SliceStable(v.problems, func(a, b int) bool { return v.problems[a].Line < v.problems[b].Line })
	return &ValidationError{Problems: v.problems}
}

func (v *validator) tenantParts(p string, t Tenant) {
	resources := map[string]string{}
	for j, res := range t.Resources {
		v.resource(index(join(p, "resources"), j), res, resources)
	}
	services := map[string]string{}
	for j, s := range t.Services {
		v.service(index(join(p, "services"), j), s, t.Language, resources, services)
	}
	v.policies(join(p, "policies"), t.Policies)
	v.templates(join(p, "templates"), t.Templates)
	v.whatsApp(join(p, "whatsapp_templates"), t)
	v.senders(join(p, "senders"), t)
}

func (v *validator) fail(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{File: v.f.name, Line: v.line(path), Path: path, Message: fmt.Sprintf(format, args...)})
}

// line finds the line of path, or of its nearest parent the parser saw.
func (v *validator) line(path string) int {
	for path != "" {
		if l, ok := v.f.pos[path]; ok {
			return l
		}
		cut := strings.LastIndexAny(path, ".[")
		if cut < 0 {
			break
		}
		path = path[:cut]
	}
	return 0
}

func (v *validator) nonEmpty(path, s string) {
	if strings.TrimSpace(s) == "" {
		v.fail(path, "must not be empty")
	}
}

// id checks an ID's form and that seen has no other with the same value
// (seen maps ID to the path that declared it).
func (v *validator) id(path, id, what string, seen map[string]string) {
	if !idPattern.MatchString(id) {
		v.fail(path, "must be a %s ID of lower-case letters, digits, '-' and '_' (at most 63), got %q", what, id)
		return
	}
	if first, dup := seen[id]; dup {
		v.fail(path, "%s %q is already declared at %s", what, id, v.where(first))
		return
	}
	seen[id] = path
}

// unique checks that value belongs to one tenant only; seen maps a value
// to "index\x00tenant\x00path" of its first owner (by index, so that two
// tenants declared with the same ID are still told apart).
func (v *validator) unique(path, value string, owner int, tenant string, seen map[string]string, what string) {
	if prev, dup := seen[value]; dup {
		parts := strings.SplitN(prev, "\x00", 3)
		if parts[0] == strconv.Itoa(owner) {
			v.fail(path, "the same %s as %s", what, v.where(parts[2]))
		} else {
			v.fail(path, "%s already belongs to tenant %q (%s); one %s, one tenant", what, parts[1], v.where(parts[2]), what)
		}
		return
	}
	seen[value] = strconv.Itoa(owner) + "\x00" + tenant + "\x00" + path
}

func (v *validator) where(path string) string {
	if l := v.line(path); l > 0 {
		return fmt.Sprintf("line %d", l)
	}
	return path
}

func (v *validator) timezone(path, tz string) {
	if tz == "" || tz == "Local" {
		v.fail(path, "must be an IANA time zone such as Europe/Berlin")
		return
	}
	if _, err := time.LoadLocation(tz); err != nil {
		v.fail(path, "unknown time zone %q (an IANA name such as Europe/Berlin)", tz)
	}
}

func languageList() string {
	names := make([]string, len(Languages))
	for i, l := range Languages {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}
