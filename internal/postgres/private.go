package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// binaries are the PostgreSQL server programs needed for a private cluster.
type binaries struct{ initdb, pgctl string }

// findBinaries looks on PATH, then in Debian's versioned directories
// (newest first), where initdb is not on PATH by default.
func findBinaries() (binaries, error) {
	if i, err := exec.LookPath("initdb"); err == nil {
		if p, err := exec.LookPath("pg_ctl"); err == nil {
			return binaries{i, p}, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		i, p := filepath.Join(d, "initdb"), filepath.Join(d, "pg_ctl")
		if isExecutable(i) && isExecutable(p) {
			return binaries{i, p}, nil
		}
	}
	return binaries{}, errors.New("initdb and pg_ctl not found")
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&0o111 != 0
}

// startPrivate initialises (once) and starts a cluster in dir on a free
// loopback port (make run's private cluster).
func startPrivate(ctx context.Context, bin binaries, dir string, log *slog.Logger) (Server, error) {
	c, err := startCluster(ctx, bin, dir, nil, log)
	if err != nil {
		return Server{}, err
	}
	return Server{AdminURL: c.AdminURL, Stop: c.Stop}, nil
}

// Cluster is a private PostgreSQL cluster this process started: the chaos
// drill owns one so that it can crash and restart it.
type Cluster struct {
	// Dir is the data directory; Port the loopback port, the same after
	// every restart so that clients reconnect to the same address.
	Dir  string
	Port int
	// AdminURL reaches the maintenance database as user postgres.
	AdminURL string

	bin      binaries
	runAs    *user.User
	settings []string
}

// HaveBinaries reports whether a private cluster can be started here.
func HaveBinaries() bool {
	_, err := findBinaries()
	return err == nil
}

// StartCluster initialises (once) and starts a private cluster in dir on a
// free loopback port; settings are extra "name=value" server settings.
func StartCluster(ctx context.Context, dir string, settings []string, log *slog.Logger) (*Cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, ErrNoServer
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return startCluster(ctx, bin, dir, settings, log)
}

// startCluster initialises and starts a cluster. PostgreSQL refuses to run
// as root, so as root the cluster belongs to the "postgres" system user.
func startCluster(ctx context.Context, bin binaries, dir string, settings []string, log *slog.Logger) (*Cluster, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	runAs, err := clusterOwner()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", abs, err)
	}
	if runAs != nil {
		if err := chownTree(filepath.Dir(abs), abs, runAs); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(abs, "PG_VERSION")); err != nil {
		log.Info("initialising private PostgreSQL cluster (first start only)")
		if out, err := run(ctx, runAs, bin.initdb, "-D", abs, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions"); err != nil {
			return nil, fmt.Errorf("initdb: %w: %s", err, out)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: abs, Port: port, bin: bin, runAs: runAs, settings: settings,
		AdminURL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	log.Info("private PostgreSQL cluster started", "addr", fmt.Sprintf("127.0.0.1:%d", port))
	return c, nil
}

// Start starts the (stopped) cluster on its port and waits until it
// accepts connections.
func (c *Cluster) Start(ctx context.Context) error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", c.Port, c.Dir)
	for _, s := range c.settings {
		opts += " -c " + s
	}
	if out, err := run(ctx, c.runAs, c.bin.pgctl, "-D", c.Dir, "-o", opts, "-l", filepath.Join(c.Dir, "server.log"), "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %w: %s (see %s)", err, out, filepath.Join(c.Dir, "server.log"))
	}
	return nil
}

// Stop shuts the cluster down cleanly (fast mode: sessions are ended,
// a checkpoint is written).
func (c *Cluster) Stop() error { return c.stop(context.Background(), "fast") }

// Crash stops the cluster in immediate mode: every server process quits at
// once, without a checkpoint, as after a power cut of the database alone;
// the next Start replays the WAL.
func (c *Cluster) Crash(ctx context.Context) error { return c.stop(ctx, "immediate") }

func (c *Cluster) stop(ctx context.Context, mode string) error {
	if out, err := run(ctx, c.runAs, c.bin.pgctl, "-D", c.Dir, "-m", mode, "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop -m %s: %w: %s", mode, err, out)
	}
	return nil
}

// clusterOwner returns nil when the current user may own the cluster, or
// the postgres user when running as root.
func clusterOwner() (*user.User, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root and no 'postgres' system user exists: PostgreSQL refuses to run as root; " +
			"run bookonce as a normal user or set DATABASE_URL")
	}
	return u, nil
}

func chownTree(parent, dir string, u *user.User) error {
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	// The parent must be traversable by the cluster owner.
	_ = os.Chmod(parent, 0o755)
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

func run(ctx context.Context, as *user.User, name string, args ...string) (string, error) {
	if as != nil {
		args = append([]string{"-u", as.Username, "--", name}, args...)
		name = "runuser"
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = os.TempDir() // the owner may not be able to read our cwd
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
