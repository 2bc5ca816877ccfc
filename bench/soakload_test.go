package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// soakRate is the measured load's rate: two new bookings a second
// through the whole path, on top of the open lifecycles. SOAK_RATE
// changes it for a diagnosis (whether a tail is the machine's
// saturation or growth); such a run does not write docs/soak.
const soakRate = 2.0

// soakLoadRate is the measured load's rate in bookings a second:
// soakRate, or SOAK_RATE for a diagnosis; own says it is soakRate.
func soakLoadRate(t *testing.T) (rate float64, own bool) {
	raw := os.Getenv("SOAK_RATE")
	if raw == "" {
		return soakRate, true
	}
	rate, err := strconv.ParseFloat(raw, 64)
	require.NoError(t, err, "SOAK_RATE: bookings a second, such as 1.5")
	require.Positive(t, rate, "SOAK_RATE: bookings a second, such as 1.5")
	return rate, false
}

// soakEvery is the time between new bookings at rate a second.
func soakEvery(rate float64) time.Duration { return time.Duration(float64(time.Second) / rate) }

// soakLoadSlots: the measured bookings take the afternoon slots of the
// next sixty working days (bookingSlot), ten a day on the demo shop's
// three resources for tire changes: room for the levels' windows, the
// deploy's and the closed loop's.
const soakLoadSlots = 600

// soakLevels are SOAK_N's levels of open lifecycles (default 1k, 5k, 20k).
func soakLevels(t *testing.T) []int {
	return envInts(t, "SOAK_N", []int{1000, 5000, 20000})
}

// envInts reads a comma-separated list of increasing positive numbers.
func envInts(t *testing.T, name string, def []int) []int {
	raw := os.Getenv(name)
	if raw == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(raw, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(t, err, "%s: numbers, e.g. 1000,5000,20000", name)
		require.Positive(t, n, name)
		out = append(out, n)
	}
	require.True(t, slices.IsSorted(out), "%s: in increasing order", name)
	return out
}

// soakRow is what the soak measured at one level of open lifecycles.
type soakRow struct {
	backend             string
	open                int
	seedRate            float64       // bookings/s while seeding up to the level
	p50, p99            time.Duration // new bookings through the whole path
	errors              int
	changes             Result          // cancels and moves beside them
	reminders           Result          // reminders falling due beside them
	rss                 []resident      // per process (soakProcNames' order), at its peak while the new bookings ran
	cpu                 []time.Duration // per new booking, per process, then PostgreSQL's
	cache               cacheReading    // the worker's workflow cache over the new bookings
	actions             float64         // Temporal actions per new booking (the changes' included)
	history             float64         // mean history length of a sample of open lifecycles
	temporalDB, pgBytes int64
}

func (r soakRow) String() string {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	cells := []string{r.backend, strconv.Itoa(r.open), fmt.Sprintf("%.0f", r.seedRate),
		r.p50.Round(time.Millisecond).String(), r.p99.Round(time.Millisecond).String(), strconv.Itoa(r.errors),
		strconv.Itoa(r.changes.Ops), r.changes.P50().Round(time.Millisecond).String(), r.changes.P99().Round(time.Millisecond).String(), strconv.Itoa(r.changes.Errors),
		fmt.Sprintf("%d / %d", r.reminders.Ops-r.reminders.Errors, r.reminders.Ops)}
	for _, m := range r.rss {
		cells = append(cells, fmt.Sprintf("%d (%d)", m.rss/1024, m.anon/1024))
	}
	for _, d := range r.cpu {
		cells = append(cells, ms(d))
	}
	cells = append(cells, fmt.Sprintf("%.1f", r.actions), strconv.Itoa(r.cache.size), r.cache.String(), fmt.Sprintf("%.1f", r.history),
		fmt.Sprintf("%.0f", float64(r.temporalDB)/(1<<20)), fmt.Sprintf("%.0f", float64(r.pgBytes)/(1<<20)))
	return "| " + strings.Join(cells, " | ") + " |"
}

// soakHeader heads the soak's table.
const soakHeader = "| Temporal on | open lifecycles | seeded/s | new booking p50 | p99 | errors | changes | change p50 | p99 | errors | reminders sent | RSS (anon) MB worker | Temporal | bookonce | CPU ms/booking worker | Temporal | bookonce | PostgreSQL | Temporal actions/booking | workflow cache | hits / misses | history length | Temporal stores MB | bookonce DB MB |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

// TestSoakFull is `make soak`: on each of SOAK_BACKENDS (default both:
// make run's SQLite file, and PostgreSQL with four shards as compose runs
// Temporal), one after the other, it opens lifecycles up to each level of SOAK_N and then runs new bookings through
// the whole path at a steady soakRate for SOAK_LOAD_N bookings (default 120,
// a minute), and reports per level: the seeding rate, the new bookings'
// latency, CPU per booking (this process, which holds the whole stack, and
// PostgreSQL), peak memory, the open lifecycles' history length and the
// databases' sizes.
func TestSoakFull(t *testing.T) {
	if os.Getenv("BOOKONCE_SOAK") != "1" {
		t.Skip("BOOKONCE_SOAK=1 (make soak) runs the soak")
	}
	levels := soakLevels(t)
	loadN := envInts(t, "SOAK_LOAD_N", []int{120})[0]
	rate, own := soakLoadRate(t)
	var b strings.Builder
	var deploys, saturations []string
	fmt.Fprintf(&b, "%s\n", soakHeader)
	for _, backend := range soakBackends(t) {
		// A subtest each: the first backend's stack is gone before the
		// second's starts, so neither measures the other's memory.
		t.Run(backend.name, func(t *testing.T) {
			var points []soakPoint
			rows, deployed, sat := soakOn(t, backend, levels, loadN, soakEvery(rate))
			for _, row := range rows {
				fmt.Fprintf(&b, "%s\n", row)
				points = append(points, row.point(soakProcNames))
			}
			if own { // the plots are of the soak's own rate
				writeSoakPoints(t, backend.name, points)
			}
			deploys = append(deploys, fmt.Sprintf("- %s, at %d open: %s", backend.name, levels[len(levels)-1], deployed))
			saturations = append(saturations, fmt.Sprintf("- %s: %s", backend.name, sat))
			assert.Empty(t, deployed.failures(), "the deploy on %s", backend.name)
		})
	}
	t.Logf("soak, %d new bookings at %.2g/s per level:\n%s\ndeploys, %d new bookings at %.2g/s meanwhile:\n%s\nsaturation, %d customers in a closed loop for %v:\n%s",
		loadN, rate, b.String(), loadN, rate, strings.Join(deploys, "\n"), soakSaturationConcurrency, soakSaturationFor, strings.Join(saturations, "\n"))
}

// soakProcNames are the soak's processes in the order of its columns:
// the worker, the Temporal server, and this process (gateway, calendar
// and payment APIs, seeder and load driver).
var soakProcNames = []string{"worker", "temporal", "bookonce"}

// soakOn runs the soak's levels on one backend, then at the last level
// a deploy and the closed loop.
func soakOn(t *testing.T, backend temporalBackend, levels []int, loadN int, every time.Duration) ([]soakRow, soakDeploy, soakSaturation) {
	server := backend.start(t)
	e := newSoakEnv(t, server.tc, levels[len(levels)-1], server.hostPort)
	e.slots = soakLoadSlots
	run := &soakRun{e: e, server: server, procs: []proc{e.worker.proc, server.proc, {name: soakProcNames[2]}},
		every: every, loadN: loadN, changesN: max(2, loadN/4), remindN: max(1, loadN/24),
		loadSeq: levels[len(levels)-1]} // the load's customers come after the seeded ones
	var rows []soakRow
	for _, level := range levels {
		row := soakRow{backend: backend.name, open: level}
		seeded := Run(context.Background(), Load{Concurrency: 32, Ops: level - run.open, SeqBase: run.open}, e.seed.op())
		require.Zero(t, seeded.Errors, "%v", seeded.FirstErr)
		run.floor, run.open = run.open, level
		row.seedRate = seeded.OpsPerSec()
		e.awaitRunning(t, level)
		e.awaitSettled(t, level)
		settleDatabases(t, append(server.databases, e.pool.Config().ConnString())...)
		run.measure(t, &row)
		writeHeapProfiles(t, fmt.Sprintf("%s-%d", backend.name, level), run.procs)
		row.history = e.meanHistory(t, 20)
		row.temporalDB = server.storeSize()
		require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT pg_database_size(current_database())`).Scan(&row.pgBytes))
		t.Logf("soak: %s", row)
		rows = append(rows, row)
	}
	d := run.deploy(t, run.open-run.changesN) // below the last window's changes
	t.Logf("soak deploy: %s", d)
	sat := run.saturate(t, rows[len(rows)-1].actions)
	t.Logf("soak saturation: %s", sat)
	return rows, d, sat
}

// soakRun is one backend's soak: its stack, and how far each kind of
// load has come (each level's customers, changed bookings and reminded
// bookings are new ones).
type soakRun struct {
	e                        soakEnv
	server                   temporalServer
	procs                    []proc
	every                    time.Duration // between new bookings
	loadN, changesN, remindN int           // per window
	// open is how many bookings the seeding opened, floor how many the
	// level before had.
	open, floor                   int
	loadSeq, changeSeq, remindSeq int
}

// measure runs the level's load (load) and fills row with what it took:
// latency, errors, peak memory and CPU per process, the worker's cache
// and Temporal's actions. With SOAK_PROFILE_DIR set it keeps what the
// server was asked and, where PostgreSQL counts them, the statements.
func (s *soakRun) measure(t *testing.T, row *soakRow) {
	stmts := resetStatements(t, s.e.pool)
	c0, cache0, m0 := procCPUs(t, s.procs), s.e.cache(t), readServer(t, s.server.metrics)
	var l soakLoad
	_, peaks := whilePeaks(t, s.procs, func() Result { l = s.load(t, s.open, s.sizes()); return l.bookings })
	c1, cache1, m1 := procCPUs(t, s.procs), s.e.cache(t), readServer(t, s.server.metrics)
	name := fmt.Sprintf("%s-%d", row.backend, row.open)
	writeSoakReport(t, "requests", name, m1.requests.perBooking(m0.requests, s.loadN))
	writeSoakReport(t, "statements", name, stmts.perBooking(t, s.loadN))
	r := l.bookings
	row.p50, row.p99, row.errors, row.rss, row.changes, row.reminders = r.P50(), r.P99(), r.Errors, peaks, l.changes, l.reminders
	for _, d := range c1.since(c0) {
		row.cpu = append(row.cpu, d/time.Duration(s.loadN))
	}
	row.cache, row.actions = cache1.since(cache0), (m1.actions-m0.actions)/float64(s.loadN)
	t.Logf("soak %d: first errors: %s", s.open, l.firstErrors())
}

// soakLoad is what one window of load did.
type soakLoad struct{ bookings, changes, reminders Result }

// firstErrors names each kind's first error.
func (l soakLoad) firstErrors() string {
	return fmt.Sprintf("booking %v, change %v, reminder %v", l.bookings.FirstErr, l.changes.FirstErr, l.reminders.FirstErr)
}

// errors is how many operations of the window failed.
func (l soakLoad) errors() int { return l.bookings.Errors + l.changes.Errors + l.reminders.Errors }

// soakSizes are the operations of one window of load.
type soakSizes struct{ bookings, changes, reminders int }

// sizes is a whole window.
func (s *soakRun) sizes() soakSizes { return soakSizes{s.loadN, s.changesN, s.remindN} }

// load is one window of load: n.bookings new bookings at the soak's rate, and over
// the same window n.changes cancels and moves of the bookings seeded
// below from (the newest first) and n.reminders reminders falling due.
// Each kind's next window takes new customers; a level's windows change
// bookings its seeding opened, each once.
func (s *soakRun) load(t *testing.T, from int, n soakSizes) soakLoad {
	require.GreaterOrEqual(t, from-n.changes, s.floor, "a window changes bookings its level opened")
	window := s.every * time.Duration(n.bookings)
	var l soakLoad
	var wg sync.WaitGroup
	wg.Go(func() {
		l.changes, _ = OpenLoop{N: n.changes, Every: window / time.Duration(n.changes), SeqBase: s.changeSeq}.
			Run(context.Background(), s.e.changeOp(from, s.changeSeq))
	})
	if n.reminders > 0 {
		wg.Go(func() {
			l.reminders, _ = OpenLoop{N: n.reminders, Every: window / time.Duration(n.reminders), SeqBase: s.remindSeq}.
				Run(context.Background(), s.e.remindOp())
		})
	}
	l.bookings, _ = OpenLoop{N: n.bookings, Every: s.every, SeqBase: s.loadSeq}.Run(context.Background(), s.e.bookingOp(t))
	wg.Wait()
	s.loadSeq, s.changeSeq, s.remindSeq = s.loadSeq+n.bookings, s.changeSeq+n.changes, s.remindSeq+n.reminders
	return l
}

// awaitRunning waits until visibility counts n running lifecycles.
func (e soakEnv) awaitRunning(t *testing.T, n int) {
	testsupport.Eventually(t, 10*time.Minute, fmt.Sprintf("%d lifecycles running", n), func() bool {
		c, err := e.tc.CountWorkflow(context.Background(), &workflowservice.CountWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowType = %q AND ExecutionStatus = 'Running'", lifecycle.WorkflowName)})
		require.NoError(t, err)
		return int(c.Count) >= n
	})
}

// awaitSettled waits until the last 20 lifecycles seeded below level
// wait on their timers alone (no workflow task, no activity pending): the
// worker takes tasks about in order, so the backlog the seeding left is
// done and the measured bookings do not queue behind it.
func (e soakEnv) awaitSettled(t *testing.T, level int) {
	// 15,000 first tasks took ten minutes on a slower two-core machine.
	testsupport.Eventually(t, 25*time.Minute, fmt.Sprintf("the lifecycles below %d settled", level), func() bool {
		for seq := max(0, level-20); seq < level; seq++ {
			b, err := e.seed.booking(seq)
			require.NoError(t, err)
			d, err := e.tc.DescribeWorkflowExecution(context.Background(), lifecycle.WorkflowID(b.in.Reference), "")
			require.NoError(t, err)
			if d.PendingWorkflowTask != nil || len(d.PendingActivities) > 0 {
				return false
			}
		}
		return true
	})
}

// meanHistory is the mean history length of k seeded lifecycles drawn at
// random.
func (e soakEnv) meanHistory(t *testing.T, k int) float64 {
	refs := seededRefs(t, e.pool)
	total := 0
	for range k {
		ref := refs[rand.IntN(len(refs))]
		d, err := e.tc.DescribeWorkflowExecution(context.Background(), lifecycle.WorkflowID(ref), "")
		require.NoError(t, err)
		total += int(d.WorkflowExecutionInfo.HistoryLength)
	}
	return float64(total) / float64(k)
}

// fileSizes sums the sizes of the files matching pattern (a SQLite
// database with its -wal and -shm).
func fileSizes(t *testing.T, pattern string) int64 {
	files, err := filepath.Glob(pattern)
	require.NoError(t, err)
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		require.NoError(t, err)
		n += st.Size()
	}
	return n
}
