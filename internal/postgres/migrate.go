package postgres

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrations are the schema of every domain, applied in order by goose.
// Each domain owns its files (00001 idempotency, 00002 calendar, ...).
//
//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies all pending migrations. A PostgreSQL advisory lock held
// for the session keeps processes that start together from racing.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	dir, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, db, dir,
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("prepare migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// MigrationsDigest is a SHA-256 over every migration file, names and
// bytes in order: it changes whenever the schema a new database gets
// changes (tests key their template database by it).
func MigrationsDigest() string {
	h := sha256.New()
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		panic(fmt.Sprintf("embedded migrations: %v", err)) // embedded at build: cannot fail
	}
	for _, e := range entries {
		b, err := fs.ReadFile(migrations, "migrations/"+e.Name())
		if err != nil {
			panic(fmt.Sprintf("embedded migration %s: %v", e.Name(), err))
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}
