package testsupport

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RequireEnv names the tools a run must not skip for (comma-separated):
// CI sets BOOKONCE_REQUIRE=radicale, so a missing Radicale fails there
// instead of skipping the CalDAV tests unnoticed.
const RequireEnv = "BOOKONCE_REQUIRE"

// Radicale starts a real CalDAV server (Radicale, from the distribution's
// packages: apt-get install radicale) for the test, in a temporary
// directory on a free loopback port, without authentication (any user
// owns the collections under their name), and returns its base URL.
// Where it is not installed the test is skipped, saying how to install
// it, unless RequireEnv names it.
func Radicale(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("radicale")
	if err != nil {
		if strings.Contains(os.Getenv(RequireEnv), "radicale") {
			t.Fatalf("radicale is not installed (apt-get install radicale) and %s requires it", RequireEnv)
		}
		t.Skip("radicale is not installed (apt-get install radicale): the CalDAV provider is not tested against a real server")
	}
	dir := t.TempDir()
	// -C with an empty file: no system or user configuration applies.
	empty := filepath.Join(dir, "config")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatalf("radicale config: %v", err)
	}
	addr := serve(t, "radicale", bin, func(addr string) []string {
		return []string{"-C", empty, "--server-hosts", addr, "--auth-type", "none", "--rights-type", "owner_write",
			"--storage-filesystem-folder", filepath.Join(dir, "collections"), "--logging-level", "warning"}
	})
	return "http://" + addr
}

// MakeCalendar creates the calendar collection user/name on the CalDAV
// server at base (MKCALENDAR, RFC 4791) and returns its URL.
func MakeCalendar(t testing.TB, base, user, name string) string {
	t.Helper()
	u := base + "/" + user + "/" + name + "/"
	req, err := http.NewRequest("MKCALENDAR", u, nil)
	if err != nil {
		t.Fatalf("make calendar: %v", err)
	}
	req.SetBasicAuth(user, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("make calendar %s: %v", u, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("make calendar %s: %s", u, resp.Status)
	}
	return u
}

// StaffEvent enters an event in the calendar at calendarURL as a person's
// calendar app does: a PUT of its own iCalendar object name.ics holding
// vevents (VEVENT blocks, lines separated by "\n"), as user werkstatt.
func StaffEvent(t testing.TB, calendarURL, name, vevents string) {
	t.Helper()
	body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//staff//app//EN\r\n" + strings.ReplaceAll(strings.TrimSpace(vevents), "\n", "\r\n") + "\r\nEND:VCALENDAR\r\n"
	req, err := http.NewRequest(http.MethodPut, calendarURL+name+".ics", strings.NewReader(body))
	if err != nil {
		t.Fatalf("staff event: %v", err)
	}
	req.SetBasicAuth("werkstatt", "")
	req.Header.Set("Content-Type", "text/calendar")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("staff event %s: %v", name, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("staff event %s: %s", name, resp.Status)
	}
}
