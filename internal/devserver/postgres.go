package devserver

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	pgplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	sqltool "go.temporal.io/server/tools/sql"

	"go.temporal.io/server/tools/common/schema"
)

// Postgres puts the server's state in PostgreSQL with several history
// shards, as docker-compose.yml runs the official image (its
// temporal-admin-tools step creates and migrates the same two databases
// with the same schema tool): the production-shaped server the soak and
// the latency bench compare with the SQLite file.
type Postgres struct {
	// URL reaches the PostgreSQL server as a user that may create
	// databases (postgres://user:password@host:port/anydb).
	URL string
	// Database is the main database; the workflow lists go to
	// Database+"_visibility". Each is created and migrated when missing.
	Database string
	// Shards is the number of history shards (compose runs 4); it is
	// fixed for the life of the databases.
	Shards int32
}

// ComposeMemoryLimit is the soft memory limit (GOMEMLIMIT) compose gives
// the official image, and the server on PostgreSQL here runs with unless
// GOMEMLIMIT is set. The server's live heap grew only 86 → 98 MB from
// 1000 to 20,000 open lifecycles, but without a limit its resident
// memory grew 16-23 % (337 → 392 MB in one run): the heap the collector
// lets grow to twice the live one between collections, and spans it
// keeps for a few live objects each (heap in use 176 → 222 MB). The
// limit makes it collect before that passes 256 MiB (docs/benchmarks.md,
// "Soak").
const ComposeMemoryLimit = 256 << 20

// Temporal's embedded schemas for PostgreSQL (what compose's
// `temporal-sql-tool update-schema --schema-name` applies).
const (
	pgMainSchema       = "postgresql/v12/temporal"
	pgVisibilitySchema = "postgresql/v12/visibility"
)

// postgresStores creates and migrates the two databases of p and returns
// the server's stores on them.
func postgresStores(p Postgres, logger log.Logger) (stores, error) {
	if p.Shards < 1 || p.Database == "" {
		return stores{}, fmt.Errorf("Temporal on PostgreSQL needs a database name and at least one shard, got %q and %d", p.Database, p.Shards)
	}
	u, err := url.Parse(p.URL)
	if err != nil || u.Host == "" {
		return stores{}, fmt.Errorf("Temporal on PostgreSQL: %q is not a postgres:// URL", redactURL(p.URL))
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, "5432"
	}
	password, _ := u.User.Password()
	st := stores{shards: p.Shards}
	// Pools as the temporalio/server image sizes them (SQL_MAX_CONNS,
	// SQL_VIS_MAX_CONNS), per service as there (docs/deploy.md,
	// "Database connections").
	for _, db := range []struct {
		name, schema string
		pool         int
		into         **config.SQL
	}{{p.Database, pgMainSchema, 20, &st.main}, {p.Database + "_visibility", pgVisibilitySchema, 10, &st.visibility}} {
		c := &config.SQL{PluginName: pgplugin.PluginName, ConnectAddr: net.JoinHostPort(host, port), ConnectProtocol: "tcp",
			User: u.User.Username(), Password: password, DatabaseName: db.name, MaxConns: db.pool, MaxIdleConns: db.pool}
		if err := migrate(c, db.schema, logger); err != nil {
			return stores{}, fmt.Errorf("Temporal database %s: %w", db.name, err)
		}
		*db.into = c
	}
	return st, nil
}

// migrate creates c's database if missing and brings it to the newest
// version of schemaName, as compose's temporal-admin-tools does with
// create-database, setup-schema -v 0.0 and update-schema.
func migrate(c *config.SQL, schemaName string, logger log.Logger) error {
	admin := *c
	if err := sqltool.DoCreateDatabase(&admin, "postgres", logger); err != nil && !strings.Contains(err.Error(), "already exists") {
		return fmt.Errorf("create database: %w", err)
	}
	conn, err := sqltool.NewConnection(c, logger)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	if err := schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger).Run(); err != nil {
		return fmt.Errorf("set up schema versioning: %w", err)
	}
	if err := schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: c.DatabaseName, SchemaName: schemaName}, logger).Run(); err != nil {
		return fmt.Errorf("update schema to %s: %w", schemaName, err)
	}
	return nil
}

// composeDynamicConfig is deploy/temporal/dynamicconfig/docker.yaml, the
// dynamic config compose gives the official image: Temporal's defaults
// but for the ID length SQL persistence can store and two caches sized
// for one small cluster (historyCacheEntries, xdcCacheBytes). A bench
// registers its search attributes right before its first start (compose
// in a step of its own, long before traffic): freshSearchAttributes makes
// them count at once.
func composeDynamicConfig() dynamicconfig.StaticClient {
	one := func(v any) []dynamicconfig.ConstrainedValue { return []dynamicconfig.ConstrainedValue{{Value: v}} }
	return dynamicconfig.StaticClient{
		dynamicconfig.MaxIDLengthLimit.Key():             one(255),
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): one(historyCacheEntries),
		dynamicconfig.XDCCacheMaxSizeBytes.Key():         one(xdcCacheBytes),
	}
}

// redactURL drops the password from a URL for a message.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
