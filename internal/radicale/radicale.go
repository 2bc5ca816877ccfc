// Package radicale runs Radicale, a real CalDAV server from the
// distribution's packages (apt-get install radicale), for the tests and
// the chaos drill: in a directory of its own, on a free loopback port,
// without authentication (any user owns the collections under their
// name). It also does what a person's calendar app does there: make a
// calendar, put and delete an event.
package radicale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// RequireEnv names the tools a run must not go without (comma-separated):
// CI sets BOOKONCE_REQUIRE=radicale, so a missing Radicale fails the
// CalDAV tests and the drill's CalDAV share instead of skipping them
// unnoticed.
const RequireEnv = "BOOKONCE_REQUIRE"

// Required reports whether RequireEnv names radicale.
func Required() bool { return strings.Contains(os.Getenv(RequireEnv), "radicale") }

// ErrNotInstalled: there is no radicale on the PATH.
var ErrNotInstalled = errors.New("radicale is not installed (apt-get install radicale)")

// Server is a running Radicale.
type Server struct {
	// URL is its base URL, http://127.0.0.1:port.
	URL    string
	cancel context.CancelFunc
	exited chan error
}

// Start runs Radicale with its collections under dir, its log to log,
// and returns once it listens. Stop ends it; so does ctx.
func Start(ctx context.Context, dir string, log io.Writer) (*Server, error) {
	bin, err := exec.LookPath("radicale")
	if err != nil {
		return nil, ErrNotInstalled
	}
	// -C with an empty file: no system or user configuration applies.
	empty := filepath.Join(dir, "config")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		return nil, fmt.Errorf("radicale config: %w", err)
	}
	var last error
	for range 3 { // a port free a moment ago may be taken by the time it binds
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		s, err := start(ctx, bin, log, addr, "-C", empty, "--server-hosts", addr, "--auth-type", "none", "--rights-type", "owner_write",
			"--storage-filesystem-folder", filepath.Join(dir, "collections"), "--logging-level", "warning")
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

func start(ctx context.Context, bin string, log io.Writer, addr string, args ...string) (*Server, error) {
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives its starter
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start radicale: %w", err)
	}
	s := &Server{URL: "http://" + addr, cancel: cancel, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-s.exited:
			cancel()
			return nil, fmt.Errorf("radicale exited before it listened on %s: %v", addr, err)
		default:
		}
		// Radicale's own answer, not just an open port: a port taken by
		// another process meanwhile also accepts connections, while this
		// Radicale exits with "address in use".
		if isRadicale(ctx, s.URL) {
			return s, nil
		}
		if time.Now().After(deadline) {
			_ = s.Stop()
			return nil, fmt.Errorf("radicale did not listen on %s within 30s", addr)
		}
		time.Sleep(50 * time.Millisecond) // polling for the port, not synchronising a test
	}
}

// Stop ends Radicale and waits for it.
func (s *Server) Stop() error {
	s.cancel()
	err := <-s.exited
	s.exited <- err // a second Stop returns at once
	return nil      // killed by the cancel: its exit status says nothing
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// MakeCalendar creates the calendar collection user/name on the server at
// base (MKCALENDAR, RFC 4791) and returns its URL.
func MakeCalendar(ctx context.Context, base, user, name string) (string, error) {
	u := base + "/" + user + "/" + name + "/"
	return u, do(ctx, "MKCALENDAR", u, user, "", http.StatusCreated)
}

// PutEvent enters an event in the calendar at calendarURL as a person's
// calendar app does: a PUT of its own iCalendar object name.ics holding
// vevents (VEVENT blocks, lines separated by "\n"), as user werkstatt.
func PutEvent(ctx context.Context, calendarURL, name, vevents string) error {
	body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//staff//app//EN\r\n" + strings.ReplaceAll(strings.TrimSpace(vevents), "\n", "\r\n") + "\r\nEND:VCALENDAR\r\n"
	return do(ctx, http.MethodPut, calendarURL+name+".ics", "werkstatt", body, http.StatusCreated, http.StatusNoContent)
}

// DeleteEvent deletes the object name.ics, as a person deleting the
// event in a calendar app; one gone already is deleted.
func DeleteEvent(ctx context.Context, calendarURL, name string) error {
	return do(ctx, http.MethodDelete, calendarURL+name+".ics", "werkstatt", "", http.StatusOK, http.StatusNoContent, http.StatusNotFound)
}

func do(ctx context.Context, method, u, user, body string, ok ...int) error {
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(user, "")
	if body != "" {
		req.Header.Set("Content-Type", "text/calendar")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	resp.Body.Close()
	for _, s := range ok {
		if resp.StatusCode == s {
			return nil
		}
	}
	return fmt.Errorf("%s %s: %s", method, u, resp.Status)
}

// isRadicale: a CalDAV server answers OPTIONS at url.
func isRadicale(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, url+"/", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return strings.Contains(resp.Header.Get("DAV"), "calendar-access")
}
