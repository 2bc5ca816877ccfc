package drill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/deploychange"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/stack"
)

// roleEnv marks a process the drill started as a worker or as one of the
// downstream services it crashes.
const roleEnv = "BOOKONCE_DRILL_ROLE"

// Roles of the child processes; temporalDBEnv names the SQLite file of
// the Temporal server, so that its state survives a restart.
const (
	roleWorker = "worker"
	// roleChanged is a worker of the deploy's new build (deployTo): the
	// production worker with a workflow change (package deploychange).
	roleChanged   = "worker-changed"
	roleCalendar  = "calendar"
	rolePayments  = "payments"
	roleTemporal  = "temporal"
	roleGateway   = "gateway"
	temporalDBEnv = "BOOKONCE_DRILL_TEMPORAL_DB"
	// temporalPortsEnv lists the Temporal server's seven internal ports,
	// comma-separated, the same for every incarnation.
	temporalPortsEnv = "BOOKONCE_DRILL_TEMPORAL_PORTS"
)

// RunWorkerIfAsked turns this process into the child the drill started it
// as (a worker, the calendar API, the payment API, a gateway replica or
// the Temporal server)
// and never returns then. cmd/chaos calls it first in main and the drill's
// tests in TestMain, so the drill needs no separate binaries and runs
// exactly the production code of each (stack.RunWorker, stack.RunCalendar,
// stack.RunPayments, stack.RunGateway, devserver.StartTemporal).
func RunWorkerIfAsked() {
	switch role := os.Getenv(roleEnv); role {
	case "":
		return
	case roleWorker:
		stack.Command("worker", config.WorkerSecrets, stack.RunWorker)
	case roleChanged:
		stack.Command("worker", config.WorkerSecrets, stack.RunWorkerWith(deploychange.Interceptor()))
	case roleCalendar:
		stack.Command("calendar API", config.CalendarSecrets, stack.RunCalendar)
	case rolePayments:
		stack.Command("payment API", config.PaymentsSecrets, stack.RunPayments)
	case roleGateway:
		stack.Command("gateway", config.GatewaySecrets, stack.RunGateway)
	case roleTemporal:
		runTemporal()
	default:
		fmt.Fprintf(os.Stderr, "bookonce drill: unknown child role %q\n", role)
		os.Exit(2)
	}
	os.Exit(0)
}

// runTemporal is the Temporal server process of the drill: the embedded
// server on TEMPORAL_ADDRESS with its state in a SQLite file, until
// SIGTERM (or SIGKILL).
func runTemporal() {
	ctx, stop, cfg, log := stack.Begin()
	defer stop()
	ports, err := parsePorts(os.Getenv(temporalPortsEnv))
	if err != nil {
		stack.Fatal(log, "Temporal server", err)
	}
	ts, err := devserver.StartTemporal(ctx, devserver.Options{
		Address: cfg.TemporalAddress, DatabaseFile: os.Getenv(temporalDBEnv), Namespace: cfg.TemporalNamespace, InternalPorts: ports,
		Sync: devserver.SyncNormal,
	})
	if err != nil {
		stack.Fatal(log, "Temporal server", err)
	}
	log.Info("Temporal server started", "addr", ts.HostPort())
	<-ctx.Done()
	if err := ts.Stop(); err != nil {
		stack.Fatal(log, "stop Temporal server", err)
	}
}

// workers keeps a number of worker processes running and kills one on
// demand with SIGKILL: no graceful stop, activities in flight are lost
// mid-call, exactly the crash the failure matrix names.
type workers struct {
	opts Options
	env  []string

	mu      sync.Mutex
	running []*exec.Cmd
	started int
	kills   int
	exited  chan error
	wg      sync.WaitGroup
	// build is the build new workers run as ("" unversioned); builds
	// the build of each running worker, and retired the builds a deploy
	// has stopped (a replacement of one of their workers runs as build).
	build   string
	builds  map[*exec.Cmd]string
	retired map[string]bool
	// exits is closed for each worker when its process has exited.
	exits map[*exec.Cmd]chan struct{}
}

func newWorkers(opts Options, env []string) *workers {
	w := &workers{opts: opts, env: env, exited: make(chan error, 64), builds: map[*exec.Cmd]string{}, retired: map[string]bool{},
		exits: map[*exec.Cmd]chan struct{}{}}
	if opts.Crashes != nil && opts.Crashes.Deploy {
		w.build = deployFrom
	}
	return w
}

// start launches one more worker process of the current build.
func (w *workers) start() error { return w.startAs("") }

// startAs launches one more worker process of build (the current one
// when empty or retired): a killed worker's replacement keeps its build,
// as its ReplicaSet would.
func (w *workers) startAs(build string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if build == "" || w.retired[build] {
		build = w.build
	}
	w.started++
	cmd := w.opts.WorkerCommand()
	role := roleWorker
	if build == deployTo {
		role = roleChanged
	}
	cmd.Env = append(append(os.Environ(), w.env...), roleEnv+"="+role)
	if build != "" {
		cmd.Env = append(cmd.Env, config.WorkerBuildIDVar+"="+build)
	}
	logFile, err := os.Create(filepath.Join(w.opts.LogDir, fmt.Sprintf("worker-%02d.log", w.started)))
	if err != nil {
		return fmt.Errorf("worker log: %w", err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A worker must not outlive the drill (Ctrl-C, or the drill killed):
	// it would poll a Temporal server that is gone, forever.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("start worker process: %w", err)
	}
	w.running = append(w.running, cmd)
	w.builds[cmd] = build
	exited := make(chan struct{})
	w.exits[cmd] = exited
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(exited)
		err := cmd.Wait()
		_ = logFile.Close()
		w.mu.Lock()
		delete(w.builds, cmd)
		delete(w.exits, cmd)
		for i, c := range w.running {
			if c == cmd {
				w.running = append(w.running[:i], w.running[i+1:]...)
				// Still listed: nobody killed it, it died on its own.
				w.exited <- fmt.Errorf("worker process %d exited: %v (log %s)", cmd.Process.Pid, err, logFile.Name())
				break
			}
		}
		w.mu.Unlock()
	}()
	return nil
}

// killOne SIGKILLs a random running worker and starts a replacement.
func (w *workers) killOne(rng *rand.Rand) error {
	w.mu.Lock()
	if len(w.running) == 0 {
		w.mu.Unlock()
		return w.start()
	}
	i := rng.IntN(len(w.running))
	victim := w.running[i]
	w.running = append(w.running[:i], w.running[i+1:]...)
	build := w.builds[victim]
	w.kills++
	w.mu.Unlock()
	if err := victim.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill worker %d: %w", victim.Process.Pid, err)
	}
	return w.startAs(build)
}

// stop kills every worker process and waits for them.
func (w *workers) stop() {
	w.mu.Lock()
	all := w.running
	w.running = nil
	w.mu.Unlock()
	for _, c := range all {
		_ = c.Process.Signal(syscall.SIGKILL)
	}
	w.wg.Wait()
}

// counts reports processes started and killed.
func (w *workers) counts() (started, kills int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started, w.kills
}

// watch fails the drill when a worker dies on its own (a crash the drill
// did not cause is a finding, not noise).
func (w *workers) watch(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-w.exited:
		return err
	}
}

// parsePorts reads "p1,p2,..." (empty: none).
func parsePorts(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("%s: %q is not a port", temporalPortsEnv, f)
		}
		out = append(out, p)
	}
	return out, nil
}

// temporalPorts returns the environment entry with seven free ports for
// the Temporal server's internal services.
func temporalPorts() (string, error) {
	addrs, err := freeAddrs(7)
	if err != nil {
		return "", err
	}
	ports := make([]string, len(addrs))
	for i, a := range addrs {
		_, p, _ := strings.Cut(a, ":")
		ports[i] = p
	}
	return temporalPortsEnv + "=" + strings.Join(ports, ","), nil
}

// restartCrashed restarts a worker whenever one dies on its own, and
// records the crash, until ctx ends.
func (w *workers) restartCrashed(ctx context.Context, crashes *crashList) {
	for {
		err := w.watch(ctx)
		if err == nil {
			return
		}
		crashes.add(err.Error())
		_ = w.start()
	}
}
