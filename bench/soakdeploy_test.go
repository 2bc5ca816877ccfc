package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/bookonce/bookonce/internal/deploychange"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// The soak's deploy: its worker runs as build soakFrom; at the last
// level, while a window of the load runs (half a level's new bookings
// and changes, all its reminders), build soakTo, whose booking lifecycle
// carries a workflow change (package deploychange), starts a quarter into
// it and promotes itself, as a rollout's first new pod does. The
// reminders are set on the old build and fall due on the new one. Once
// soakTo is current and that window is over, a second window of new
// bookings and changes runs on it alone, changing bookings the old build
// opened. Once no run is pinned to soakFrom any more, soakFrom's worker
// stops (SIGTERM), as the rollout ends.
const (
	soakFrom = "soak-1"
	soakTo   = "soak-2"
	// soakDrainBound bounds the switch and the drain each.
	soakDrainBound = 5 * time.Minute
)

// soakDeploy is what the deploy did, and what it left behind.
type soakDeploy struct {
	// before is the window over the switch, after the one behind it.
	before, after soakLoad
	// current and drained are how long after the new build's worker
	// started it was current and the old build had no pinned run left;
	// pinned is how many runs were pinned to the old build at the switch.
	current, drained time.Duration
	pinned           int64
	// changed counts the open lifecycles that recorded the change: those
	// changed on the new build.
	changed int
	// nonDeterminism counts TMPRL1100 in both workers' logs; stuck the
	// sagas still open and the workflows the server reports problems for;
	// the duplicates are bookings and captured deposits per customer and
	// slot beyond the first, over every booking of the run.
	nonDeterminism, stuck               int
	duplicateBookings, duplicateCharges int
}

func (d soakDeploy) String() string {
	done := func(r Result) string { return fmt.Sprintf("%d/%d", r.Ops-r.Errors, r.Ops) }
	return fmt.Sprintf("%s → %s: current %v after its worker started, %d runs pinned to %s then, drained %v after; "+
		"over the switch %s bookings, %s changes, %s reminders, then %s, %s, %s; %d open lifecycles with the change; "+
		"%d non-determinism errors, %d stuck, %d duplicate bookings, %d duplicate charges",
		soakFrom, soakTo, d.current.Round(100*time.Millisecond), d.pinned, soakFrom, d.drained.Round(100*time.Millisecond),
		done(d.before.bookings), done(d.before.changes), done(d.before.reminders),
		done(d.after.bookings), done(d.after.changes), done(d.after.reminders), d.changed,
		d.nonDeterminism, d.stuck, d.duplicateBookings, d.duplicateCharges)
}

// failures lists what the deploy did wrong.
func (d soakDeploy) failures() []string {
	var f []string
	for what, l := range map[string]soakLoad{"over the switch": d.before, "after it": d.after} {
		if n := l.errors(); n > 0 {
			f = append(f, fmt.Sprintf("%d operations failed %s (first: %s)", n, what, l.firstErrors()))
		}
	}
	for what, n := range map[string]int{"non-determinism errors": d.nonDeterminism, "stuck workflows": d.stuck,
		"duplicate bookings": d.duplicateBookings, "duplicate charges": d.duplicateCharges} {
		if n > 0 {
			f = append(f, fmt.Sprintf("%d %s", n, what))
		}
	}
	if d.changed == 0 {
		f = append(f, "no open lifecycle recorded "+soakTo+"'s change")
	}
	return f
}

// deploy runs the two windows of the deploy, whose changes take the
// bookings seeded below below, and counts what they left; the new
// build's worker is the soak's worker after it.
func (s *soakRun) deploy(t *testing.T, below int) soakDeploy {
	ctx := context.Background()
	deployment := "soak-" + s.e.cfg.TaskQueue
	first := soakSizes{max(1, s.loadN/2), max(1, s.changesN/2), s.remindN}
	second := soakSizes{first.bookings, first.changes, 0}
	var d soakDeploy
	done := make(chan soakLoad, 1)
	go func() { done <- s.load(t, below, first) }()
	<-time.After(s.every * time.Duration(first.bookings) / 4) // a quarter into the window
	from, to := s.e.worker, s.e.startBuild(t, roleChanged, soakTo)
	started := time.Now()
	until(t, "build "+soakTo+" current", func() (bool, error) {
		b, _, err := stack.CurrentBuild(ctx, s.e.tc, s.e.cfg.TemporalNamespace, deployment)
		return b == soakTo, err
	})
	d.current = time.Since(started)
	var err error
	d.pinned, err = stack.PinnedOpen(ctx, s.e.tc, deployment, soakFrom)
	require.NoError(t, err)
	d.before = <-done
	d.after = s.load(t, below-first.changes, second)
	until(t, "no run pinned to "+soakFrom, func() (bool, error) {
		n, err := stack.PinnedOpen(ctx, s.e.tc, deployment, soakFrom)
		return n == 0, err
	})
	d.drained = time.Since(started)
	from.stop(t)
	s.e.worker = to
	for i, p := range s.procs {
		if p.pid == from.pid {
			s.procs[i] = to.proc
		}
	}
	d.changed = s.e.countWorkflows(t, fmt.Sprintf("TemporalChangeVersion = %q AND ExecutionStatus = 'Running'", deploychange.Marker()))
	d.nonDeterminism = countIn(t, "TMPRL1100", from.log, to.log)
	d.stuck = s.e.stuck(t)
	d.duplicateBookings, d.duplicateCharges = s.e.duplicates(t)
	return d
}

// until polls cond every second until it holds, for up to
// soakDrainBound.
func until(t *testing.T, what string, cond func() (bool, error)) {
	deadline := time.After(soakDrainBound)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		select {
		case <-deadline:
			t.Fatalf("%s: not within %v (last error: %v)", what, soakDrainBound, last)
		case <-time.After(time.Second):
		}
	}
}

// countIn counts s in the files.
func countIn(t *testing.T, s string, files ...string) int {
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		n += strings.Count(string(b), s)
	}
	return n
}

// stuck counts the workflows left stuck once the load is over: booking
// and payment sagas still open (the soak's customers pay by card, so
// each ends within seconds; visibility gets a minute to catch up), and
// workflows whose tasks keep failing, which the server marks with
// TemporalReportedProblems.
func (e soakEnv) stuck(t *testing.T) int {
	count := func(q string) int { return e.countWorkflows(t, q) }
	sagas := fmt.Sprintf("WorkflowType IN (%q, %q) AND ExecutionStatus = 'Running'", appointment.WorkflowName, deposit.WorkflowName)
	deadline := time.After(time.Minute)
	for open := count(sagas); open > 0; open = count(sagas) {
		select {
		case <-deadline:
			return open + count("TemporalReportedProblems IS NOT NULL")
		case <-time.After(time.Second):
		}
	}
	return count("TemporalReportedProblems IS NOT NULL")
}

// duplicates counts, over every booking of the run, the confirmed
// bookings and the captured deposits beyond the first per customer and
// slot: bookings at the slot each holds now, deposits at the slot their
// booking first held (a moved booking keeps its deposit). Neither is
// capped by a constraint: the calendar forbids overlaps per resource,
// not per customer, and each saga has a reference of its own.
func (e soakEnv) duplicates(t *testing.T) (bookings, charges int) {
	ctx := context.Background()
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(n - 1), 0) FROM (
		SELECT count(*) AS n FROM calendar_reservations WHERE tenant_id = $1 AND status = 'confirmed'
		GROUP BY customer, lower(slot)) d`, tenant).Scan(&bookings))
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(n - 1), 0) FROM (
		SELECT count(DISTINCT p.id) AS n FROM payment_intents p JOIN calendar_reservations r
		  ON r.tenant_id = p.tenant_id AND r.reference = p.booking_reference
		WHERE r.tenant_id = $1 AND p.amount_captured > 0
		GROUP BY r.customer, lower(r.slot)) d`, tenant).Scan(&charges))
	return bookings, charges
}

// countWorkflows counts the workflows visibility finds for q. (Listing
// them, as stack.ReadVersions does, took more than the client's ten
// seconds a page on the SQLite server at 20,000 open.)
func (e soakEnv) countWorkflows(t *testing.T, q string) int {
	r, err := e.tc.CountWorkflow(context.Background(), &workflowservice.CountWorkflowExecutionsRequest{Query: q})
	require.NoError(t, err, q)
	return int(r.GetCount())
}
