package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/apitoken"
	"github.com/bookonce/bookonce/internal/testsupport"
)

const acmeFile = `tenants:
  - id: acme
    name: Acme
    twilio_numbers: ["+4940111111"]
    timezone: Europe/Berlin
    language: de
    resources:
      - {id: lift-1, name: Lift 1, kind: bay, hours: {mon-fri: 08:00-17:00}}
    services:
      - {id: wash, name: Wash, duration: 20m, resources: [lift-1], deposit: {amount: 500, currency: eur}, synonyms: {de: [Wäsche]}}
`

// starter tenants through its real code path: flags, file, database.
func TestStarterTenants(t *testing.T) {
	_, dbURL := testsupport.DatabaseURL(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "tenants.yaml")
	require.NoError(t, os.WriteFile(good, []byte(acmeFile), 0o600))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(acmeFile+"    colour: red\n"), 0o600))
	env := func(k string) (string, bool) {
		if k == "DATABASE_URL" {
			return dbURL, true
		}
		return "", false
	}
	cases := []struct {
		name       string
		args       []string
		code       int
		out, error string
	}{
		{"no command", nil, exitUsage, "", "usage: starter tenants"},
		{"unknown command", []string{"remove"}, exitUsage, "", `unknown command "remove"`},
		{"apply without file", []string{"apply"}, exitUsage, "", "-f FILE is required"},
		{"stray argument", []string{"apply", "-f", good, "now"}, exitUsage, "", "unexpected arguments now"},
		{"missing file", []string{"apply", "-f", filepath.Join(dir, "nope.yaml")}, exitFailed, "", "no such file"},
		{"rejected file", []string{"apply", "-f", bad}, exitFailed, "", "bad.yaml:11: tenants[0].colour: unknown key"},
		{"dry run", []string{"apply", "-f", good, "--dry-run"}, exitOK, "+ tenant acme", ""},
		{"still demo after the dry run", []string{"list"}, exitOK, "demo", ""},
		{"if empty: there is the demo tenant", []string{"apply", "--if-empty", "-f", good}, exitOK, "no changes", ""},
		{"apply", []string{"apply", "-f", good}, exitOK, "- tenant demo", ""},
		{"list", []string{"list"}, exitOK, "acme    Acme  de        Europe/Berlin  +4940111111  0       lift-1     wash", ""},
		{"apply again", []string{"apply", "-f", good}, exitOK, "no changes", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runTenants(context.Background(), c.args, env, &stdout, &stderr)
			require.Equal(t, c.code, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			require.Contains(t, stdout.String(), c.out)
			require.Contains(t, stderr.String(), c.error)
		})
	}
}

// A token minted by `starter tenants token` is well-formed, new each
// time, and once its printed line is applied the APIs' registry accepts
// it for that tenant, while the same token with one character changed is
// refused before any lookup.
func TestStarterTenantsTokenMintsWhatTheAPIsAccept(t *testing.T) {
	pool, dbURL := testsupport.DatabaseURL(t)
	env := func(k string) (string, bool) {
		if k == "DATABASE_URL" {
			return dbURL, true
		}
		return "", false
	}
	mint := func() (token, digestLine string) {
		var stdout, stderr bytes.Buffer
		require.Equal(t, exitOK, runTenants(context.Background(), []string{"token"}, env, &stdout, &stderr), stderr.String())
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			if !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		require.Len(t, lines, 2, stdout.String())
		return lines[0], lines[1]
	}
	tok, line := mint()
	other, _ := mint()
	require.NoError(t, apitoken.Check(tok))
	require.NotEqual(t, tok, other)
	require.Equal(t, "- "+apitoken.Digest(tok), line)

	file := filepath.Join(t.TempDir(), "tenants.yaml")
	withToken := strings.Replace(acmeFile, "    timezone:", "    api_token_sha256:\n      "+line+"\n    timezone:", 1)
	require.NoError(t, os.WriteFile(file, []byte(withToken), 0o600))
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, runTenants(context.Background(), []string{"apply", "-f", file}, env, &stdout, &stderr), stderr.String())

	reg := testsupport.Tenants(t, pool)
	p, ok := reg.ByToken(tok)
	require.True(t, ok)
	require.Equal(t, "acme", p.ID)
	other = "A"
	if tok[10] == 'A' {
		other = "B"
	}
	typo := tok[:10] + other + tok[11:] // one character mistyped
	require.ErrorIs(t, apitoken.Check(typo), apitoken.ErrMalformed)
	_, ok = reg.ByToken(typo)
	require.False(t, ok)
}
