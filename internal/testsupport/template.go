package testsupport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/internal/postgres"
	"github.com/bookonce/bookonce/tenants"
)

// A test database is a copy of a template: a database migrated and given
// the demo tenants once, named after a digest of the migrations and the
// demo tenants file, so every test binary of a run (and of later runs with
// the same schema) copies the same one. Building it takes a few hundred
// milliseconds; a copy takes a few dozen.
const (
	templatePrefix = "bookonce_tmpl_"
	// templateMaxAge is how long a template of another schema is kept:
	// a run in another work tree (a branch with other migrations) may be
	// copying it at this moment.
	templateMaxAge = 24 * time.Hour
)

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// templateDatabase is the name of the template this schema's test
// databases are copied from, built if no test binary has built it yet.
func templateDatabase(t testing.TB, admin string) string {
	t.Helper()
	templateOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		templateName, templateErr = ensureTemplate(ctx, admin)
	})
	if templateErr != nil {
		t.Fatalf("build the test template database: %v", templateErr)
	}
	return templateName
}

// templateDigest names the schema and data a template holds.
func templateDigest() string {
	h := sha256.New()
	fmt.Fprintln(h, postgres.MigrationsDigest())
	h.Write(deploy.DemoTenants)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ensureTemplate builds the template under an advisory lock, so test
// binaries starting together build it once, and publishes it by renaming
// a finished copy: a builder that dies midway leaves only a "_build"
// database, which the next builder drops.
func ensureTemplate(ctx context.Context, admin string) (string, error) {
	name := templatePrefix + templateDigest()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", fmt.Errorf("connect to the test PostgreSQL server: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, templatePrefix); err != nil {
		return "", fmt.Errorf("lock the template: %w", err)
	}
	// The lock is the session's: closing the connection releases it.
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", fmt.Errorf("look for the template: %w", err)
	}
	if exists {
		return name, nil
	}
	if err := buildTemplate(ctx, conn, admin, name); err != nil {
		return "", err
	}
	dropOldTemplates(ctx, conn, name)
	return name, nil
}

// buildTemplate migrates a new database, applies the demo tenants and
// renames it to name.
func buildTemplate(ctx context.Context, conn *pgx.Conn, admin, name string) error {
	build := pgx.Identifier{name + "_build"}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+build+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop a half-built template: %w", err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+build); err != nil {
		return fmt.Errorf("create the template: %w", err)
	}
	dbURL, err := postgres.WithDatabase(admin, name+"_build")
	if err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("migrate the template: %w", err)
	}
	_, err = deploy.ApplyDemoTenants(ctx, pool, tenants.ApplyOptions{})
	pool.Close()
	if err != nil {
		return fmt.Errorf("apply the demo tenants to the template: %w", err)
	}
	stamp := "built " + time.Now().UTC().Format(time.RFC3339)
	if _, err := conn.Exec(ctx, "COMMENT ON DATABASE "+build+" IS "+quoteLiteral(stamp)); err != nil {
		return fmt.Errorf("stamp the template: %w", err)
	}
	return renameWhenClosed(ctx, conn, build, pgx.Identifier{name}.Sanitize())
}

// renameWhenClosed renames a database once the backends of the pool just
// closed have exited (a rename needs a database nobody is connected to;
// a backend exits a moment after its client said goodbye).
func renameWhenClosed(ctx context.Context, conn *pgx.Conn, from, to string) error {
	for {
		_, err := conn.Exec(ctx, "ALTER DATABASE "+from+" RENAME TO "+to)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" { // object_in_use
			if err != nil {
				return fmt.Errorf("publish the template: %w", err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("publish the template: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// dropOldTemplates drops templates of other schemas built more than
// templateMaxAge ago; a failure only leaves a database behind.
func dropOldTemplates(ctx context.Context, conn *pgx.Conn, keep string) {
	rows, err := conn.Query(ctx, `
		SELECT d.datname FROM pg_database d
		LEFT JOIN pg_shdescription s ON s.objoid = d.oid AND s.classoid = 'pg_database'::regclass
		WHERE d.datname LIKE $1 AND d.datname NOT LIKE '%\_build' AND d.datname <> $2
		  AND coalesce(substring(s.description from 'built (.*)')::timestamptz, 'epoch') < now() - $3::interval`,
		templatePrefix+"%", keep, fmt.Sprintf("%d seconds", int(templateMaxAge.Seconds())))
	if err != nil {
		return
	}
	old, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, name := range old {
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)") // leftovers only cost disk
	}
}

// quoteLiteral quotes s as an SQL string literal (COMMENT takes no
// parameters).
func quoteLiteral(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
