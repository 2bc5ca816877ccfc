package devserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"go.temporal.io/server/common/config"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/schema/sqlite"
)

// The server's data store names.
const (
	mainStore       = "sqlite-main"
	visibilityStore = "sqlite-visibility"
)

// SQLite page cache of each database file, and no memory map. SQLite's
// own default cache is 2 MB: every other page read is a system call, and
// the store outgrows that within a few hundred bookings. The cache is a
// bound, not an allocation. It was 128 MiB with a 1 GiB memory map per
// file: both filled as the files grew, and the server's resident memory
// grew 2.5 times while open lifecycles grew twentyfold (1.6 GB at
// 20,000). With 32 MiB and the file's pages left to the kernel's page
// cache (reclaimable, and not the process's), the soak measured the same
// latency or better and less CPU per booking (docs/benchmarks.md).
const (
	cacheKiB  = 32768 // 32 MiB
	mmapBytes = 0
)

// embeddedGCPercent is the process's GOGC while it runs a file-backed
// server, unless GOGC is set: the server allocates heavily per workflow
// task, and at Go's default of 100 the collector took about a tenth of
// two cores at five bookings a second (docs/benchmarks.md).
const embeddedGCPercent = 400

// embeddedMemoryLimit is the process's soft memory limit (GOMEMLIMIT)
// while it runs a file-backed server, unless GOMEMLIMIT is set: at GOGC
// 400 the heap may grow to five times what is live, and the limit makes
// the collector run before that passes 384 MiB (the server's live heap
// was 64 to 72 MB from 1000 to 20,000 open lifecycles).
const embeddedMemoryLimit = 384 << 20

// stores are the server's SQLite databases: main holds executions, task
// queues, namespaces and cluster metadata, visibility the rows behind
// workflow lists and search attributes.
type stores struct {
	main, visibility *config.SQL
	// shards is the number of history shards (0: one).
	shards int32
}

// VisibilityFile is where a server on file keeps its visibility rows.
// They have their own file because each row is written in full, with
// some sixty indexes and two full-text tables, several times per
// booking: in the main file these writes queued every history write
// behind them on the plugin's one connection.
func VisibilityFile(file string) string {
	ext := filepath.Ext(file)
	return strings.TrimSuffix(file, ext) + "-visibility" + ext
}

// sqliteStores are the stores in memory (one database, unique per server
// in this process) or in opts.DatabaseFile and its VisibilityFile, whose
// schemas are created on first use.
func sqliteStores(opts Options) (stores, error) {
	if opts.DatabaseFile == "" {
		c := &config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{"mode": "memory", "cache": "shared"}}
		c.DatabaseName = fmt.Sprintf("bookonce-%d-%d", os.Getpid(), time.Now().UnixNano())
		return stores{main: c, visibility: c}, nil
	}
	sync, err := ParseSync(string(opts.Sync))
	if err != nil {
		return stores{}, err
	}
	if err := os.MkdirAll(filepath.Dir(opts.DatabaseFile), 0o755); err != nil {
		return stores{}, fmt.Errorf("create %s: %w", filepath.Dir(opts.DatabaseFile), err)
	}
	mainExists, err := exists(opts.DatabaseFile)
	if err != nil {
		return stores{}, err
	}
	visExists, err := exists(VisibilityFile(opts.DatabaseFile))
	if err != nil {
		return stores{}, err
	}
	st := stores{main: fileStore(opts.DatabaseFile, sync)}
	if mainExists && !visExists {
		// A file from before the split keeps its lists where they are.
		st.visibility = st.main
	} else {
		st.visibility = fileStore(VisibilityFile(opts.DatabaseFile), sync)
	}
	if err := setupSchema(st.main); err != nil {
		return stores{}, err
	}
	if st.visibility != st.main {
		if err := setupSchema(st.visibility); err != nil {
			return stores{}, err
		}
	}
	return st, nil
}

// fileStore opens file in WAL mode with sync. Temporal's SQLite plugin
// passes every attribute but the URI parameters as a pragma under its
// exact name, and SQLite ignores pragmas it does not know: go-sqlite3's
// "_journal_mode" spelling once left the file in rollback-journal mode
// with an fsync per write, which could not keep up with five bookings a
// second.
func fileStore(file string, sync Sync) *config.SQL {
	return &config.SQL{PluginName: sqliteplugin.PluginName, DatabaseName: file, ConnectAttributes: map[string]string{
		"mode":         "rwc",
		"journal_mode": "wal",
		"synchronous":  string(sync),
		"cache_size":   fmt.Sprint(-cacheKiB),
		"mmap_size":    fmt.Sprint(mmapBytes),
	}}
}

// setupSchema creates Temporal's tables in a new file. (The plugin
// creates the execution and the visibility schema together; the unused
// half stays empty.)
func setupSchema(c *config.SQL) error {
	if ok, err := exists(c.DatabaseName); err != nil || ok {
		return err
	}
	if err := sqlite.SetupSchema(c); err != nil {
		return fmt.Errorf("create Temporal schema in %s: %w", c.DatabaseName, err)
	}
	return nil
}

func exists(file string) (bool, error) {
	_, err := os.Stat(file)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for %s: %w", file, err)
	}
	return true, nil
}

// tuneGC sets embeddedGCPercent and embeddedMemoryLimit for a
// file-backed server, and ComposeMemoryLimit for one on PostgreSQL (as
// compose runs the official image), unless the operator chose GOGC or
// GOMEMLIMIT (tests on the in-memory server keep Go's defaults).
func tuneGC(opts Options) {
	limit := int64(embeddedMemoryLimit)
	switch {
	case opts.Postgres != nil:
		limit = ComposeMemoryLimit
	case opts.DatabaseFile == "":
		return
	case os.Getenv("GOGC") == "":
		debug.SetGCPercent(embeddedGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}
