package drill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/bookonce/bookonce/internal/stack"
)

// roleEnv marks a process the drill started as a worker.
const roleEnv = "BOOKONCE_DRILL_ROLE"

// RunWorkerIfAsked turns this process into a bookonce worker (and never
// returns) when the drill started it as one. cmd/chaos calls it first in
// main and the drill's tests in TestMain, so the drill needs no separate
// worker binary and runs exactly the production worker code.
func RunWorkerIfAsked() {
	if os.Getenv(roleEnv) != "worker" {
		return
	}
	stack.Command("worker", stack.RunWorker)
	os.Exit(0)
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
}

func newWorkers(opts Options, env []string) *workers {
	return &workers{opts: opts, env: env, exited: make(chan error, 64)}
}

// start launches one more worker process.
func (w *workers) start() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started++
	cmd := w.opts.WorkerCommand()
	cmd.Env = append(append(os.Environ(), w.env...), roleEnv+"=worker")
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
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		err := cmd.Wait()
		_ = logFile.Close()
		w.mu.Lock()
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
	w.kills++
	w.mu.Unlock()
	if err := victim.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill worker %d: %w", victim.Process.Pid, err)
	}
	return w.start()
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
