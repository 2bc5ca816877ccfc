package bench

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // the children's heap profiles (soakPprof)
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/deploychange"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// The soak runs the Temporal server and the worker as processes of their
// own, as compose and Kubernetes run them, so that each one's memory and
// CPU are its own figures: the bench's test binary, started again with
// soakRoleEnv, is that process (TestMain).
const (
	soakRoleEnv  = "BOOKONCE_SOAK_ROLE"
	roleTemporal = "temporal"
	roleWorker   = "worker"
	// roleChanged is the worker of a deploy's new build: the production
	// worker with a workflow change (package deploychange).
	roleChanged = "worker-changed"
	// soakTemporalDB is the server's SQLite file; soakTemporalPG and
	// soakTemporalPGDB its PostgreSQL (the admin URL and the database).
	soakTemporalDB   = "BOOKONCE_SOAK_TEMPORAL_DB"
	soakTemporalPG   = "BOOKONCE_SOAK_TEMPORAL_PG"
	soakTemporalPGDB = "BOOKONCE_SOAK_TEMPORAL_PG_DB"
	// soakTemporalMetrics is where the server serves its own metrics.
	soakTemporalMetrics = "BOOKONCE_SOAK_TEMPORAL_METRICS"
	// readyPrefix starts the line a server process prints when it serves.
	readyPrefix = "temporal ready at "
	// soakPprof is the loopback address a child serves net/http/pprof on,
	// so that the soak can take its heap profile at each level.
	soakPprof = "BOOKONCE_SOAK_PPROF"
)

func TestMain(m *testing.M) {
	role := os.Getenv(soakRoleEnv)
	if addr := os.Getenv(soakPprof); role != "" && addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }() // net/http/pprof's handlers; the soak finds it or reports the miss
	}
	switch role {
	case "":
		os.Exit(m.Run())
	case roleWorker:
		stack.Command("worker", config.WorkerSecrets, stack.RunWorker)
	case roleChanged:
		stack.Command("worker", config.WorkerSecrets, stack.RunWorkerWith(deploychange.Interceptor()))
	case roleTemporal:
		runSoakTemporal()
	default:
		fmt.Fprintf(os.Stderr, "bench: unknown %s %q\n", soakRoleEnv, role)
		os.Exit(2)
	}
	os.Exit(0)
}

// runSoakTemporal is the soak's Temporal server process: the server
// module on a SQLite file as make run starts it, or on PostgreSQL as
// compose runs the official image, until SIGTERM.
func runSoakTemporal() {
	ctx, stop := stack.SignalContext()
	defer stop()
	opts := devserver.Options{Address: "127.0.0.1:0", DatabaseFile: os.Getenv(soakTemporalDB), Sync: devserver.SyncNormal,
		MetricsListen: os.Getenv(soakTemporalMetrics)}
	if admin := os.Getenv(soakTemporalPG); admin != "" {
		opts.DatabaseFile = ""
		opts.Postgres = &devserver.Postgres{URL: admin, Database: os.Getenv(soakTemporalPGDB), Shards: postgresShards}
	}
	ts, err := devserver.StartTemporal(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: Temporal server:", err)
		os.Exit(1)
	}
	fmt.Println(readyPrefix + ts.HostPort())
	<-ctx.Done()
	if err := ts.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "bench: stop Temporal server:", err)
		os.Exit(1)
	}
}

// proc is one process of the soak's stack: pid 0 is this one (the
// gateway, the two APIs, the seeder and the load driver).
type proc struct {
	name  string
	pid   int
	pprof string // where it serves net/http/pprof; "" none
}

// dir is the process's /proc directory.
func (p proc) dir() string {
	if p.pid == 0 {
		return "/proc/self"
	}
	return "/proc/" + strconv.Itoa(p.pid)
}

// resident is a process's resident set in kB, and of it the anonymous
// pages (its own memory) and the file-backed ones (SQLite's memory maps:
// page cache the kernel may take back).
type resident struct{ rss, anon, file int64 }

// rss reads the process's resident set.
func (p proc) rss() (resident, error) {
	b, err := os.ReadFile(p.dir() + "/status")
	if err != nil {
		return resident{}, err
	}
	var r resident
	fields := map[string]*int64{"VmRSS:": &r.rss, "RssAnon:": &r.anon, "RssFile:": &r.file}
	for l := range strings.SplitSeq(string(b), "\n") {
		name, v, ok := strings.Cut(l, "\t")
		if to, want := fields[name]; ok && want {
			if *to, err = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err != nil {
				return resident{}, fmt.Errorf("%s/status %s %q: %w", p.dir(), name, v, err)
			}
			delete(fields, name)
		}
	}
	if len(fields) > 0 {
		return resident{}, fmt.Errorf("%s/status lacks %d of VmRSS, RssAnon, RssFile", p.dir(), len(fields))
	}
	return r, nil
}

// cpu is the process's CPU time so far, user and system.
func (p proc) cpu() (time.Duration, error) {
	b, err := os.ReadFile(p.dir() + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%s/stat: %d fields", p.dir(), len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, errors.Join(err1, err2) // USER_HZ = 100
}

// child is a process the soak started: this test binary in a role.
type child struct {
	proc
	lines  *bufio.Scanner // its standard output
	exited chan struct{}  // closed when it has ended
	log    string         // its standard error
}

// tail is the end of the child's standard error, for a failure message.
func (c *child) tail() string {
	b, _ := os.ReadFile(c.log)
	return string(b[max(0, len(b)-4000):])
}

// stop ends the child as a rollout ends a pod (SIGTERM: a worker
// finishes the tasks it holds) and waits for it, up to 30 s.
func (c *child) stop(t *testing.T) {
	require.NoError(t, syscall.Kill(c.pid, syscall.SIGTERM), c.name)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop within 30 s of SIGTERM: %s", c.name, c.tail())
	}
}

// startChild starts this test binary again as role with env added and
// stops it (SIGTERM, then SIGKILL after 30 s) when the test ends.
func startChild(t *testing.T, role string, env ...string) *child {
	pprofAt := freeAddr(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), soakRoleEnv+"="+role, soakPprof+"="+pprofAt)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	c := &child{lines: bufio.NewScanner(out), exited: make(chan struct{}), log: filepath.Join(t.TempDir(), role+".log")}
	stderr, err := os.Create(c.log)
	require.NoError(t, err)
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	c.proc = proc{name: role, pid: cmd.Process.Pid, pprof: pprofAt}
	go func() {
		_ = cmd.Wait() // how it ended shows in its log
		_ = stderr.Close()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-c.exited
		}
	})
	return c
}

// startTemporalProcess starts the server process and returns its address
// and where it serves its metrics.
func startTemporalProcess(t *testing.T, env ...string) (p proc, addr, metrics string) {
	metrics = freeAddr(t)
	c := startChild(t, roleTemporal, append(env, soakTemporalMetrics+"="+metrics)...)
	ready := make(chan string, 1)
	go func() {
		for c.lines.Scan() {
			if a, ok := strings.CutPrefix(c.lines.Text(), readyPrefix); ok {
				ready <- a
			}
		}
	}()
	select {
	case a := <-ready:
		return c.proc, a, "http://" + metrics + "/metrics"
	case <-c.exited:
		t.Fatalf("the Temporal server process ended: %s", c.tail())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the Temporal server process did not start in 2 minutes: %s", c.tail())
	}
	return proc{}, "", ""
}

// workerProcess is a worker the soak started, and its /metrics.
type workerProcess struct {
	*child
	metrics string
}

// startWorkerProcess starts the production worker (stack.RunWorker, or
// as role roleChanged with a workflow change) as a process configured
// like cfg, on the database at dbURL and the server at hostPort, with
// env added, and waits until it is healthy.
func startWorkerProcess(t *testing.T, role string, cfg config.Config, dbURL, hostPort string, env ...string) workerProcess {
	listen := freeAddr(t)
	c := startChild(t, role, append([]string{
		"DATABASE_URL=" + dbURL, "TEMPORAL_ADDRESS=" + hostPort, "TEMPORAL_NAMESPACE=" + cfg.TemporalNamespace,
		"TEMPORAL_TASK_QUEUE=" + cfg.TaskQueue, "CALENDAR_URL=" + cfg.CalendarURL, "PAYMENTS_URL=" + cfg.PaymentsURL,
		"DEPOSIT_MODE=" + string(cfg.DepositMode), "WORKER_LISTEN=" + listen, "LOG_LEVEL=warn"}, env...)...)
	testsupport.Eventually(t, 2*time.Minute, "the worker process healthy", func() bool {
		select {
		case <-c.exited:
			t.Fatalf("the worker process ended: %s", c.tail())
		default:
		}
		resp, err := http.Get("http://" + listen + "/healthz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return workerProcess{child: c, metrics: "http://" + listen + "/metrics"}
}

// freeAddr is a loopback address with a port free a moment ago, for a
// child to listen on.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}
