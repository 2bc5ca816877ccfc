package testsupport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// StripeMockVersion is the stripe-mock the tests run: Stripe's official
// mock, built from Stripe's OpenAPI definition, which refuses any request
// the definition does not allow. It is installed with go install, never
// required in go.mod.
const StripeMockVersion = "v0.203.0"

var (
	stripeMockOnce sync.Once
	stripeMockBin  string
	stripeMockErr  error
)

// StripeMock starts stripe-mock on a free loopback port for the test and
// returns its base URL. The binary is found on PATH or installed once per
// machine into the user's cache directory (go install, from the Go module
// proxy); where that is impossible the test is skipped, saying why.
func StripeMock(t testing.TB) string {
	t.Helper()
	stripeMockOnce.Do(func() { stripeMockBin, stripeMockErr = installStripeMock() })
	if stripeMockErr != nil {
		t.Skipf("stripe-mock %s is not installed and could not be (%v): the requests are not checked against Stripe's API definition", StripeMockVersion, stripeMockErr)
	}
	// Both listeners on free loopback ports: unset, HTTPS takes :12112 on
	// every interface, which a second run at once would find taken.
	addr := serve(t, "stripe-mock", stripeMockBin, func(addr string) []string {
		return []string{"-http-addr", addr, "-https-addr", freeLoopbackAddr(t)}
	})
	return "http://" + addr
}

// installStripeMock returns the stripe-mock binary: on PATH, in the cache,
// or installed into the cache now.
func installStripeMock() (string, error) {
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: %w", err)
	}
	dir := filepath.Join(cache, "bookonce", "stripe-mock-"+StripeMockVersion)
	bin := filepath.Join(dir, "stripe-mock")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", "github.com/stripe/stripe-mock@"+StripeMockVersion)
	cmd.Dir = os.TempDir() // outside this module: go install pkg@version needs none
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install github.com/stripe/stripe-mock@%s: %w: %s", StripeMockVersion, err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", errors.New("go install left no stripe-mock in " + dir)
	}
	return bin, nil
}

// serving holds a port from the moment serve picks it until its server
// listens: two tests of one binary picking at once could otherwise be
// given the same free port, and the second server's test would talk to
// the first's (seen with two Radicales in make test).
var serving sync.Mutex

// serve picks a free loopback address, runs bin with args(addr) for the
// test's lifetime, its output in the test's log, and returns addr once
// the server listens there. A server that exits first fails the test.
func serve(t testing.TB, name, bin string, args func(addr string) []string) string {
	t.Helper()
	serving.Lock()
	defer serving.Unlock()
	addr := freeLoopbackAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args(addr)...)
	cmd.Stdout, cmd.Stderr = LogWriter(t), LogWriter(t)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited // killed by the cancel: its exit status says nothing
	})
	Eventually(t, 30*time.Second, name+" listening on "+addr, func() bool {
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("%s exited before it listened on %s: %v", name, addr, err)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	return addr
}

// freeLoopbackAddr is a loopback address whose port was free a moment ago.
func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("free port %s: %v", addr, err)
	}
	return addr
}

var (
	stripeSpecOnce sync.Once
	stripeSpec     map[string]json.RawMessage
	stripeSpecErr  error
)

// StripeSchemas returns the schemas (components.schemas) of Stripe's
// OpenAPI definition as stripe-mock StripeMockVersion embeds it, read from
// the Go module cache (go mod download, once per machine); where that is
// impossible the test is skipped, saying why.
func StripeSchemas(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	schemas, err := LoadStripeSchemas()
	if err != nil {
		t.Skipf("Stripe's OpenAPI definition (stripe-mock %s) could not be had (%v): answers are not checked against it", StripeMockVersion, err)
	}
	return schemas
}

// LoadStripeSchemas is StripeSchemas for helpers that check what they can
// and go on without the definition (the error says why it is missing).
func LoadStripeSchemas() (map[string]json.RawMessage, error) {
	stripeSpecOnce.Do(func() { stripeSpec, stripeSpecErr = loadStripeSchemas() })
	return stripeSpec, stripeSpecErr
}

func loadStripeSchemas() (map[string]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "github.com/stripe/stripe-mock@"+StripeMockVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download: %w", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return nil, fmt.Errorf("go mod download named no directory: %s", out)
	}
	raw, err := os.ReadFile(filepath.Join(mod.Dir, "embedded", "openapi", "spec3.json"))
	if err != nil {
		return nil, err
	}
	var spec struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("spec3.json: %w", err)
	}
	return spec.Components.Schemas, nil
}
