package testsupport

import (
	"context"
	"errors"
	"testing"

	"github.com/bookonce/bookonce/internal/radicale"
)

// RequireEnv names the tools a run must not skip for (radicale.RequireEnv).
const RequireEnv = radicale.RequireEnv

// Radicale starts a real CalDAV server (Radicale, from the distribution's
// packages: apt-get install radicale) for the test, in a temporary
// directory on a free loopback port, without authentication (any user
// owns the collections under their name), and returns its base URL.
// Where it is not installed the test is skipped, saying how to install
// it, unless RequireEnv names it.
func Radicale(t testing.TB) string {
	t.Helper()
	s, err := radicale.Start(context.Background(), t.TempDir(), LogWriter(t))
	if errors.Is(err, radicale.ErrNotInstalled) {
		if radicale.Required() {
			t.Fatalf("radicale is not installed (apt-get install radicale) and %s requires it", RequireEnv)
		}
		t.Skip("radicale is not installed (apt-get install radicale): the CalDAV provider is not tested against a real server")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s.URL
}

// MakeCalendar creates the calendar collection user/name on the CalDAV
// server at base (MKCALENDAR, RFC 4791) and returns its URL.
func MakeCalendar(t testing.TB, base, user, name string) string {
	t.Helper()
	u, err := radicale.MakeCalendar(context.Background(), base, user, name)
	if err != nil {
		t.Fatalf("make calendar: %v", err)
	}
	return u
}

// StaffEvent enters an event in the calendar at calendarURL as a person's
// calendar app does: a PUT of its own iCalendar object name.ics holding
// vevents (VEVENT blocks, lines separated by "\n"), as user werkstatt.
func StaffEvent(t testing.TB, calendarURL, name, vevents string) {
	t.Helper()
	if err := radicale.PutEvent(context.Background(), calendarURL, name, vevents); err != nil {
		t.Fatalf("staff event: %v", err)
	}
}
