package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DatabaseName is the database bookonce uses on a discovered server.
const DatabaseName = "bookonce"

// ErrNoServer says that no PostgreSQL could be found or started.
var ErrNoServer = errors.New("no PostgreSQL server found: set DATABASE_URL, run `docker compose up -d postgres`, " +
	"or install PostgreSQL (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql) so bookonce can start a private one")

// Options says where to look for a server.
type Options struct {
	// URL, when set, is used as is (DATABASE_URL).
	URL string
	// DataDir is where a private cluster lives (<DataDir>/postgres).
	DataDir string
	// LocalAddrs are the servers tried before starting a private cluster;
	// nil means the default 127.0.0.1:5432 as users postgres and root.
	LocalAddrs []string
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// Server is a PostgreSQL server bookonce can administer: AdminURL reaches
// its maintenance database. Stop is non-nil when bookonce started it.
type Server struct {
	AdminURL string
	Stop     func() error
}

// Discover returns the URL of the bookonce database, creating the database
// on a discovered server if needed, or starting a private cluster. The
// returned stop function (never nil) stops a cluster bookonce started.
func Discover(ctx context.Context, opts Options) (string, func() error, error) {
	if opts.URL != "" {
		return opts.URL, func() error { return nil }, nil
	}
	srv, err := FindServer(ctx, opts)
	if err != nil {
		return "", nil, err
	}
	dbURL, err := EnsureDatabase(ctx, srv.AdminURL, DatabaseName)
	if err != nil {
		_ = srv.Stop()
		return "", nil, err
	}
	return dbURL, srv.Stop, nil
}

// FindServer looks for a running server on the local addresses, then starts
// a private cluster where PostgreSQL binaries are installed.
func FindServer(ctx context.Context, opts Options) (Server, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	addrs := opts.LocalAddrs
	if addrs == nil {
		addrs = []string{
			"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
			"postgres://root@127.0.0.1:5432/postgres?sslmode=disable",
		}
	}
	for _, u := range addrs {
		if ping(ctx, u) == nil {
			log.Info("using PostgreSQL server", "addr", redact(u))
			return Server{AdminURL: u, Stop: func() error { return nil }}, nil
		}
	}
	bin, err := findBinaries()
	if err != nil {
		return Server{}, ErrNoServer
	}
	log.Info("no PostgreSQL server answered; starting a private cluster", "dir", opts.DataDir+"/postgres")
	return startPrivate(ctx, bin, opts.DataDir+"/postgres", log)
}

// EnsureDatabase creates database name on the server if missing and returns
// its URL.
func EnsureDatabase(ctx context.Context, adminURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("look up database %s: %w", name, err)
	}
	if !exists {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		if err != nil && !isDuplicateDatabase(err) {
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return WithDatabase(adminURL, name)
}

// WithDatabase returns url pointing at database name.
func WithDatabase(raw, name string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("parse database URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// PoolSize is each process's pool unless DATABASE_URL sets
// pool_max_conns: pgx's default (max(4, CPUs)) is too small for an API
// server whose requests each hold a transaction for the idempotency
// record. The deployments' connection budgets count it (docs/deploy.md).
const PoolSize = 16

// Open connects a pool, waits for the server and applies the migrations.
func Open(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	if !strings.Contains(dbURL, "pool_max_conns") {
		cfg.MaxConns = PoolSize
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for {
		if err = pool.Ping(pingCtx); err == nil {
			break
		}
		select {
		case <-pingCtx.Done():
			pool.Close()
			return nil, fmt.Errorf("PostgreSQL at %s does not answer: %w", redact(dbURL), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func ping(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}

func isDuplicateDatabase(err error) bool {
	var pgErr interface{ SQLState() string }
	return errors.As(err, &pgErr) && pgErr.SQLState() == "42P04"
}

// redact hides a password in a URL for logs.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
