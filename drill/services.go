package drill

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/bookonce/bookonce/internal/devserver"
)

// service is one downstream the drill runs as a child process (the
// calendar API, the payment API, the Temporal server) on a fixed address,
// so that whatever points at it (the fault proxies, the workers, the
// gateway) reaches the next incarnation after a kill.
type service struct {
	name  string
	role  string
	addr  string
	env   []string
	opts  Options
	ready func(ctx context.Context) error
	// metrics reads the process's /metrics across its incarnations (nil
	// for the Temporal server).
	metrics *remoteGatherer

	mu     sync.Mutex
	cmd    *childProc
	starts int
	// lagging counts the incarnations of a payment API whose search lags
	// its writes (searchLags).
	lagging int
	// crashing is held while the drill brings this service down and up
	// again, so that a kill never restarts a service during an outage.
	crashing sync.Mutex
	exited   chan error
	waiting  sync.WaitGroup
}

// childProc is one incarnation of a service and the channel closed when it
// has exited.
type childProc struct {
	pid  int
	sig  func(os.Signal) error
	done chan struct{}
}

func newService(name, role, addr string, env []string, opts Options, ready func(context.Context) error) *service {
	return &service{name: name, role: role, addr: addr, env: env, opts: opts, ready: ready, exited: make(chan error, 16)}
}

// searchLags draws whether this incarnation (of a payment API) searches
// like Stripe's index, which lags writes: SearchLagShare percent of the
// incarnations, so the lag holds for about that share of the run (every
// kill starts a new incarnation), seeded per service and incarnation.
func (s *service) searchLags() bool {
	if s.role != rolePayments || s.opts.SearchLag <= 0 {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(s.name)) // a hash.Hash never returns an error
	return rand.New(rand.NewPCG(s.opts.Seed^h.Sum64(), uint64(s.starts))).IntN(100) < s.opts.SearchLagShare
}

// start launches a new incarnation and waits until it answers.
func (s *service) start(ctx context.Context) error {
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return nil
	}
	s.starts++
	cmd := s.opts.WorkerCommand()
	cmd.Env = append(append(os.Environ(), s.env...), roleEnv+"="+s.role)
	if s.searchLags() {
		s.lagging++
		cmd.Env = append(cmd.Env, "PAYMENTS_SEARCH_LAG="+s.opts.SearchLag.String())
	}
	logFile, err := os.Create(filepath.Join(s.opts.LogDir, fmt.Sprintf("%s-%02d.log", s.name, s.starts)))
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("%s log: %w", s.name, err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A service must not outlive the drill (Ctrl-C, or the drill killed).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		_ = logFile.Close()
		return fmt.Errorf("start %s process: %w", s.name, err)
	}
	p := &childProc{pid: cmd.Process.Pid, sig: cmd.Process.Signal, done: make(chan struct{})}
	s.cmd = p
	s.waiting.Add(1)
	go func() {
		defer s.waiting.Done()
		err := cmd.Wait()
		_ = logFile.Close()
		s.mu.Lock()
		if s.cmd == p { // still current: nobody stopped it, it died on its own
			s.cmd = nil
			select {
			case s.exited <- fmt.Errorf("%s process %d exited: %v (log %s)", s.name, p.pid, err, logFile.Name()):
			default:
			}
		}
		s.mu.Unlock()
		close(p.done)
	}()
	s.mu.Unlock()
	if err := s.ready(ctx); err != nil {
		return fmt.Errorf("%s did not answer on %s: %w (log %s)", s.name, s.addr, err, logFile.Name())
	}
	return nil
}

// stop sends sig to the running incarnation and waits for it to exit;
// after grace it is SIGKILLed (a SIGTERM that does not end the process).
func (s *service) stop(sig syscall.Signal, grace time.Duration) error {
	s.mu.Lock()
	p := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	if err := p.sig(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s process %d: %w", s.name, p.pid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = p.sig(syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s process %d ignored %v for %s and was SIGKILLed", s.name, p.pid, sig, grace)
}

// close kills the running incarnation and waits for every one.
func (s *service) close() {
	_ = s.stop(syscall.SIGKILL, 10*time.Second)
	s.waiting.Wait()
}

// watch returns the error of an incarnation that died on its own, or nil
// when ctx ends.
func (s *service) watch(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.exited:
		return err
	}
}

// httpReady polls a service's /healthz until it answers 200 (it answers
// only when its database does, too).
func httpReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		var last error
		for {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
				err = fmt.Errorf("/healthz answered %d", resp.StatusCode)
			}
			last = err
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// temporalReady waits until the Temporal frontend answers for namespace.
func temporalReady(addr, namespace string) func(context.Context) error {
	return func(ctx context.Context) error {
		return devserver.WaitReady(ctx, addr, namespace, 2*time.Minute)
	}
}

// searchLag counts the payment API incarnations whose search lagged.
func (e *env) searchLag() SearchLagReport {
	r := SearchLagReport{Lag: e.opts.SearchLag.String()}
	for _, svc := range e.apis[upstreamPayments] {
		svc.mu.Lock()
		r.Incarnations += svc.starts
		r.Lagging += svc.lagging
		svc.mu.Unlock()
	}
	return r
}
