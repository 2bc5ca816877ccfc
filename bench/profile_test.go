package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// component is a part of the process whose share of the CPU samples a
// profile reports: the samples with at least one frame matching re. The
// shares overlap (a pgx call made by bookonce code counts for both).
type component struct {
	name string
	re   *regexp.Regexp
}

var components = []component{
	{"Temporal server (in-process)", regexp.MustCompile(`^go\.temporal\.io/server/`)},
	{"  of which SQLite (Temporal's persistence)", regexp.MustCompile(`sqlite`)},
	{"Temporal SDK (clients and workers)", regexp.MustCompile(`^go\.temporal\.io/sdk/`)},
	{"gRPC", regexp.MustCompile(`^google\.golang\.org/grpc`)},
	{"net/http (client and server)", regexp.MustCompile(`^net/http\.`)},
	{"pgx (PostgreSQL client)", regexp.MustCompile(`^github\.com/jackc/pgx`)},
	{"bookonce idempotency middleware", regexp.MustCompile(`^github\.com/bookonce/bookonce/idempotency\.`)},
	{"bookonce calendar and payment APIs", regexp.MustCompile(`^github\.com/bookonce/bookonce/(calendar|payments)\.`)},
	{"bookonce gateway", regexp.MustCompile(`^github\.com/bookonce/bookonce/channels`)},
	{"the load driver", regexp.MustCompile(`^github\.com/bookonce/bookonce/bench\.`)},
	{"garbage collector", regexp.MustCompile(`^runtime\.(gcBgMarkWorker|gcDrain|bgsweep|bgscavenge)`)},
	{"system calls (socket I/O)", regexp.MustCompile(`^(syscall\.|internal/runtime/syscall)`)},
}

// profiled runs op once more under a CPU profile (not one of the measured
// runs) and returns what pprof says, as markdown: the share of each
// component and the top functions. Empty when dir is empty.
func profiled(t *testing.T, dir, name string, l Load, op Op) string {
	if dir == "" {
		return ""
	}
	path := filepath.Join(dir, name+".pprof")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, pprof.StartCPUProfile(f))
	r := Run(context.Background(), l, op)
	pprof.StopCPUProfile()
	require.NoError(t, f.Close())
	require.Zero(t, r.Errors, "profiled run: %v", r.FirstErr)
	goBin := filepath.Join(goRoot(), "bin", "go")

	var out strings.Builder
	traces, err := exec.Command(goBin, "tool", "pprof", "-traces", path).Output()
	if err != nil {
		return "pprof -traces failed: " + err.Error() + "\n"
	}
	total, shares := componentShares(string(traces))
	fmt.Fprintf(&out, "%d ops in %.1f s; %s of CPU samples (%.0f%% of one core).\n\n", r.Ops, r.Elapsed.Seconds(),
		total.Round(10*time.Millisecond), 100*total.Seconds()/r.Elapsed.Seconds())
	out.WriteString("| component (samples with a frame in it; overlapping) | share |\n|---|---:|\n")
	for i, c := range components {
		fmt.Fprintf(&out, "| %s | %.0f%% |\n", c.name, 100*shares[i])
	}
	top, err := exec.Command(goBin, "tool", "pprof", "-top", "-nodecount=15", path).Output()
	if err != nil {
		return out.String() + "pprof -top failed: " + err.Error() + "\n"
	}
	out.WriteString("\n```\n" + trimHeader(string(top)) + "```\n")
	return out.String()
}

// componentShares reads `pprof -traces` output: blocks of one sample value
// followed by its stack, separated by dashed lines.
func componentShares(traces string) (time.Duration, []float64) {
	var total time.Duration
	sums := make([]time.Duration, len(components))
	var value time.Duration
	hit := make([]bool, len(components))
	flush := func() {
		for i, h := range hit {
			if h {
				sums[i] += value
			}
			hit[i] = false
		}
		total += value
		value = 0
	}
	sc := bufio.NewScanner(strings.NewReader(traces))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	inBlock := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			if inBlock {
				flush()
			}
			inBlock = true
			continue
		}
		if !inBlock {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		// The first line of a block is "<value> <function>", the rest
		// "<function>" (possibly followed by "(inline)").
		fn := fields[0]
		if d, err := time.ParseDuration(fields[0]); err == nil && len(fields) > 1 {
			value, fn = d, fields[1]
		}
		for i, c := range components {
			if c.re.MatchString(fn) {
				hit[i] = true
			}
		}
	}
	if inBlock && value > 0 {
		flush()
	}
	shares := make([]float64, len(components))
	if total > 0 {
		for i, s := range sums {
			shares[i] = float64(s) / float64(total)
		}
	}
	return total, shares
}

// trimHeader drops pprof's file, build ID and time lines.
func trimHeader(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "File:") || strings.HasPrefix(l, "Build ID:") || strings.HasPrefix(l, "Time:") || strings.HasPrefix(l, "Type:") {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// goRoot is the root of the toolchain that runs this test (GOTOOLCHAIN
// may select another than the go on PATH), for its pprof.
func goRoot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
