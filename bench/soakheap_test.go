package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/require"
)

// liveHeap collects and reads what the Go heap holds live, in kB: the
// part of the resident memory that grows with what the stack keeps,
// unlike the rest, which at the embedded server's GOGC follows the
// allocation rate. With SOAK_PROFILE_DIR set it also writes the heap
// profile there as heap-<name>.pb.gz (go tool pprof -sample_index=inuse_space).
func liveHeap(t *testing.T, name string) int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if dir := os.Getenv("SOAK_PROFILE_DIR"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%s.pb.gz", name)))
		require.NoError(t, err)
		require.NoError(t, pprof.Lookup("heap").WriteTo(f, 0))
		require.NoError(t, f.Close())
		g, err := os.Create(filepath.Join(dir, fmt.Sprintf("goroutines-%s.txt", name)))
		require.NoError(t, err)
		require.NoError(t, pprof.Lookup("goroutine").WriteTo(g, 1))
		require.NoError(t, g.Close())
	}
	return int64(ms.HeapAlloc / 1024)
}
