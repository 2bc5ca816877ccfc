package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// setting is one row of the configuration table (docs/configuration.md): the variable
// and the processes its "Used by" column names.
type setting struct {
	name   string
	usedBy []string
}

// configRow matches a row of the configuration table, whose first cell is
// a variable name, e.g. "| `HOLD_TTL` | `10m` | calendar | ... |".
var configRow = regexp.MustCompile("(?m)^\\s*\\|\\s*`?([A-Z][A-Z0-9_]*[A-Z0-9])`?\\s*\\|([^|\\n]*)\\|([^|\\n]*)\\|")

// parseConfigTable returns the rows of every markdown table whose first
// cell is a variable name. "Used by" is split on commas and lower-cased;
// "all" and "apis" are expanded to the processes they stand for.
func parseConfigTable(markdown string) []setting {
	var out []setting
	for _, m := range configRow.FindAllStringSubmatch(markdown, -1) {
		var users []string
		for u := range strings.SplitSeq(m[3], ",") {
			switch u = strings.ToLower(strings.TrimSpace(u)); u {
			case "":
			case "all":
				users = append(users, "worker", "gateway", "calendar", "payments", "cli")
			case "apis":
				users = append(users, "calendar", "payments")
			case "starter":
				users = append(users, "cli")
			default:
				users = append(users, u)
			}
		}
		out = append(out, setting{name: m[1], usedBy: users})
	}
	return out
}

var (
	readmeOnce  sync.Once
	readmeTable []setting
	readmeErr   error
)

// configTable is the configuration table (docs/configuration.md), read once: the only
// variables our containers may be given (a typo would be a silently
// ignored setting), and which process reads which.
func configTable() ([]setting, error) {
	readmeOnce.Do(func() {
		var md []byte
		md, readmeErr = os.ReadFile(filepath.Join(repoRoot, "docs", "configuration.md"))
		readmeTable = parseConfigTable(string(md))
	})
	return readmeTable, readmeErr
}

// documented reports whether docs/configuration.md's table has a row
// for name; a page that cannot be read documents nothing.
func documented(name string) bool {
	table, _ := configTable()
	return slices.ContainsFunc(table, func(s setting) bool { return s.name == name })
}

// readBy lists the variables docs/configuration.md says process reads.
func readBy(process string) []string {
	table, _ := configTable()
	var names []string
	for _, s := range table {
		if slices.Contains(s.usedBy, process) {
			names = append(names, s.name)
		}
	}
	return names
}

func TestParseConfigTable(t *testing.T) {
	cases := []struct {
		name, md string
		want     []setting
	}{
		{"row with backticks", "| Variable | Default | Used by | Meaning |\n|---|---|---|---|\n| `HOLD_TTL` | `10m` | calendar | hold |\n",
			[]setting{{"HOLD_TTL", []string{"calendar"}}}},
		{"all and APIs expand", "| `LOG_LEVEL` | info | all | x |\n| `IDEMPOTENCY_TTL` | 72h | APIs | x |\n",
			[]setting{{"LOG_LEVEL", []string{"worker", "gateway", "calendar", "payments", "cli"}}, {"IDEMPOTENCY_TTL", []string{"calendar", "payments"}}}},
		{"several users", "| TWILIO_FROM | +49 | worker, Gateway, starter | x |\n",
			[]setting{{"TWILIO_FROM", []string{"worker", "gateway", "cli"}}}},
		{"prose is no row", "HOLD_TTL in prose | not a table\n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, parseConfigTable(tc.md))
		})
	}
}

// TestConfigTableExists: the checks that read the table would pass
// vacuously without one.
func TestConfigTableExists(t *testing.T) {
	table, err := configTable()
	require.NoError(t, err, "docs/configuration.md holds the table the deployment checks read")
	require.Greater(t, len(table), 30, "docs/configuration.md's table looks truncated")
	for _, p := range []string{"worker", "gateway", "calendar", "payments"} {
		require.NotEmpty(t, readBy(p), "the table names no variable %s reads", p)
	}
}
