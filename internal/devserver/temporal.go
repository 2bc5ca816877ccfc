package devserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

// Options configures an embedded Temporal server.
type Options struct {
	// Address is the frontend gRPC listen address; "127.0.0.1:0" picks a
	// free port (tests).
	Address string
	// DatabaseFile persists state in SQLite; empty keeps it in memory.
	// The workflow lists (visibility) go to VisibilityFile(DatabaseFile)
	// when the server creates DatabaseFile, and stay in it for a file
	// created before the split.
	DatabaseFile string
	// Namespace is registered at start ("default" when empty).
	Namespace string
	// Logger receives the server's own logs; nil discards them.
	Logger log.Logger
	// InternalPorts, when set, are the seven ports of the services behind
	// the frontend (history, matching and worker gRPC, then the four
	// membership ports). Empty: those of the last start on DatabaseFile
	// when they are free (PortsFile remembers them), else free ports. A
	// server restarted on its database file must keep them: its
	// membership table still names the old incarnation's addresses, and
	// requests routed to them fail until those entries are declared dead
	// (about a minute), stalling every workflow meanwhile.
	InternalPorts []int
	// Postgres, when set, keeps the state in PostgreSQL instead of
	// SQLite, with compose's shards and dynamic config (postgres.go).
	Postgres *Postgres
	// Sync is how DatabaseFile is synced (SQLite's synchronous pragma in
	// WAL mode): SyncNormal when empty.
	Sync Sync
	// TLS, when set, secures the frontend (the server's Global.TLS: the
	// frontend's certificate, RequireClientAuth for mTLS, and the system
	// workers' client certificate); ClientTLS is then how StartTemporal
	// itself dials to see the server ready. Tests of TLS connections use it.
	TLS       *config.RootTLS
	ClientTLS *tls.Config
	// MetricsListen, when set, serves the server's own Prometheus metrics
	// at /metrics there, among them "action": what Temporal Cloud would
	// bill and rate-limit (the soak counts it per booking).
	MetricsListen string
}

// Sync is SQLite's synchronous setting for the server's database file,
// which always runs in WAL mode.
type Sync string

const (
	// SyncNormal syncs at checkpoints only: every commit survives the
	// server process being killed (the chaos drill kills it hundreds of
	// times); the last commits can be lost if the machine loses power.
	// A commit costs no fsync, which two cores cannot afford at five
	// bookings a second.
	SyncNormal Sync = "normal"
	// SyncFull syncs the WAL at every commit: commits survive power
	// loss too, for a single-box installation that wants that and can
	// pay an fsync per Temporal write.
	SyncFull Sync = "full"
)

// ParseSync reads a Sync setting ("" is SyncNormal).
func ParseSync(s string) (Sync, error) {
	switch v := Sync(strings.ToLower(strings.TrimSpace(s))); v {
	case "", SyncNormal:
		return SyncNormal, nil
	case SyncFull:
		return SyncFull, nil
	default:
		return "", fmt.Errorf("unknown sync mode %q: want %q or %q", s, SyncNormal, SyncFull)
	}
}

// Temporal is a running embedded server.
type Temporal struct {
	server    temporal.Server
	hostPort  string
	namespace string
}

// StartTemporal starts the server and returns once its frontend and its
// matching service answer (see probeReady).
func StartTemporal(ctx context.Context, opts Options) (*Temporal, error) {
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.Logger == nil {
		opts.Logger = log.NewNoopLogger()
	}
	host, port, err := resolveAddress(opts.Address)
	if err != nil {
		return nil, err
	}
	if err := probeFree(host, port); err != nil {
		return nil, err
	}

	st, err := storesFor(opts)
	if err != nil {
		return nil, err
	}
	tuneGC(opts)
	if len(opts.InternalPorts) == 0 && opts.DatabaseFile != "" {
		if opts.InternalPorts, err = rememberedPorts(opts.DatabaseFile, host); err != nil {
			return nil, err
		}
	}
	cfg, err := serverConfig(host, port, opts.InternalPorts, st)
	if err != nil {
		return nil, err
	}
	if opts.TLS != nil {
		cfg.Global.TLS = *opts.TLS
	}
	if opts.MetricsListen != "" {
		cfg.Global.Metrics = &metrics.Config{Prometheus: &metrics.PrometheusConfig{
			Framework: metrics.FrameworkOpentelemetry, ListenAddress: opts.MetricsListen, HandlerPath: "/metrics"}}
	}
	srv, err := newServer(cfg, st.main, opts)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start Temporal server: %w", err)
	}
	t := &Temporal{server: srv, hostPort: net.JoinHostPort(host, strconv.Itoa(port)), namespace: opts.Namespace}
	if err := waitReady(ctx, client.Options{HostPort: t.hostPort, Namespace: t.namespace, ConnectionOptions: client.ConnectionOptions{TLS: opts.ClientTLS}}, readyWithin); err != nil {
		// Not stopped: a server whose matching service has not joined
		// its membership ring panics inside ringpop when stopped (a nil
		// label store). It is left running for the process's exit,
		// which every caller takes on this error.
		return nil, err
	}
	return t, nil
}

// newServer registers the namespace in the store and assembles the server.
func newServer(cfg *config.Config, sqlCfg *config.SQL, opts Options) (temporal.Server, error) {
	ns, err := sqlite.NewNamespaceConfig(cfg.ClusterMetadata.CurrentClusterName, opts.Namespace, false, nil)
	if err != nil {
		return nil, fmt.Errorf("namespace config: %w", err)
	}
	if err := sqlite.CreateNamespaces(sqlCfg, ns); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", opts.Namespace, err)
	}
	authorizer, err := authorization.GetAuthorizerFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&cfg.Global.Authorization, opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("claim mapper: %w", err)
	}
	dc := memoryConfig(dynamicConfigFor(opts))
	srv, err := temporal.NewServer(
		temporal.WithConfig(cfg),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(opts.Logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dc),
		temporal.WithChainedFrontendGrpcInterceptors(freshSearchAttributes{config: dc, settle: searchAttributesSettle}.intercept),
	)
	if err != nil {
		return nil, fmt.Errorf("create Temporal server: %w", err)
	}
	return srv, nil
}

// storesFor are the stores opts asks for: PostgreSQL, or SQLite in a file
// or in memory.
func storesFor(opts Options) (stores, error) {
	if opts.Postgres != nil {
		return postgresStores(*opts.Postgres, opts.Logger)
	}
	return sqliteStores(opts)
}

// dynamicConfigFor is compose's dynamic config for a server on
// PostgreSQL (the production shape, compared as it runs), the embedded
// server's own tuning otherwise.
func dynamicConfigFor(opts Options) dynamicconfig.StaticClient {
	if opts.Postgres != nil {
		return composeDynamicConfig()
	}
	return serverDynamicConfig()
}

// serverDynamicConfig is what the embedded server changes from Temporal's
// defaults (docs/benchmarks.md, "The 20 s stall", explains the first two).
func serverDynamicConfig() dynamicconfig.StaticClient {
	one := func(v any) []dynamicconfig.ConstrainedValue { return []dynamicconfig.ConstrainedValue{{Value: v}} }
	return dynamicconfig.StaticClient{
		// A client waiting for a workflow's result is a history long poll
		// fed by per-waiter notifications; the history service drops a
		// notification when the waiter has not yet taken the previous one
		// (service/history/events/notifier.go), so a close that follows
		// another change within moments can go unnoticed until the long
		// poll expires: 20 s by default. A short expiry bounds that miss;
		// the client simply polls again.
		dynamicconfig.HistoryLongPollExpirationInterval.Key(): one(longPollExpiry),
		// One history shard here: Temporal's default of 20 queue reads per
		// second per shard made every workflow and activity task wait
		// ~50 ms (a booking ~1 s); clusters spread the same load over
		// hundreds of shards.
		dynamicconfig.TransferProcessorMaxPollRPS.Key():   one(queueReadsPerSecond),
		dynamicconfig.TimerProcessorMaxPollRPS.Key():      one(queueReadsPerSecond),
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): one(queueReadsPerSecond),
		dynamicconfig.OutboundProcessorMaxPollRPS.Key():   one(queueReadsPerSecond),
		// A queue forgets the tasks it has finished only at its checkpoint
		// (every 30 s by default), and each new range of tasks is split
		// against every task it still tracks: at a hundred tasks a second
		// that scan took a tenth of the CPU. A short checkpoint keeps the
		// tracked set, and the task tables, small.
		dynamicconfig.TransferProcessorUpdateAckInterval.Key():   one(queueCheckpointEvery),
		dynamicconfig.TimerProcessorUpdateAckInterval.Key():      one(queueCheckpointEvery),
		dynamicconfig.VisibilityProcessorUpdateAckInterval.Key(): one(queueCheckpointEvery),
		dynamicconfig.OutboundProcessorUpdateAckInterval.Key():   one(queueCheckpointEvery),
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():         one(historyCacheEntries),
		dynamicconfig.XDCCacheMaxSizeBytes.Key():                 one(xdcCacheBytes),
	}
}

const (
	// historyCacheEntries caps the workflows whose state the history
	// service keeps in memory. Temporal's 128,000 (for an hour each) is
	// sized for a cluster's history hosts; a booking's lifecycle waits
	// for weeks and is read a few times in all, so with it the server's
	// memory grew with every open booking (issue #49's soak). A miss is
	// one read of the workflow's row.
	historyCacheEntries = 1000
	// xdcCacheBytes shrinks the cache of recent history the server keeps
	// for replication to other clusters, which a single cluster never
	// reads: its 8 MiB default filled as open bookings grew (heap
	// profiles of the soak), to no use. 64 KiB is the server's minimum.
	xdcCacheBytes = 64 << 10
	// longPollExpiry bounds how late a result waiter can see a workflow's
	// close (about twice this, measured; see serverDynamicConfig).
	longPollExpiry = time.Second
	// queueReadsPerSecond caps the history queue reads of the one shard.
	queueReadsPerSecond = 1000
	// queueCheckpointEvery is how often the shard's queues drop finished
	// tasks (one small write each).
	queueCheckpointEvery = time.Second
)

// readyWithin bounds how long StartTemporal waits for a new server to
// answer. A start on fresh ports takes seconds; the bound is for a
// machine busy with other work (two test binaries linking beside it).
const readyWithin = 2 * time.Minute

// HostPort is the frontend gRPC address.
func (t *Temporal) HostPort() string { return t.hostPort }

// Namespace is the registered namespace.
func (t *Temporal) Namespace() string { return t.namespace }

// Stop shuts the server down.
func (t *Temporal) Stop() error { return t.server.Stop() }

// WaitReady dials the Temporal frontend at hostPort until it answers and
// namespace is known, for at most timeout: a server started in another
// process (the chaos drill's) is ready when this returns nil.
func WaitReady(ctx context.Context, hostPort, namespace string, timeout time.Duration) error {
	return waitReady(ctx, client.Options{HostPort: hostPort, Namespace: namespace}, timeout)
}

// waitReady is WaitReady with the client options to dial with (TLS).
func waitReady(ctx context.Context, o client.Options, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	o.Logger = quietLogger{}
	var lastErr error
	for {
		err := probeReady(ctx, o)
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("Temporal server did not become ready: %w", lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// probeReady asks the frontend for its health, the namespace and a task
// queue: the last is answered by the matching service, which joins the
// membership ring in a goroutine of its own after the server's Start has
// returned. A server stopped before that join completes panics inside
// ringpop (a nil label store), so the server is ready only once matching
// is in the frontend's ring.
func probeReady(ctx context.Context, o client.Options) error {
	c, err := client.DialContext(ctx, o)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return err
	}
	if _, err := c.WorkflowService().DescribeNamespace(ctx, describeNamespace(o.Namespace)); err != nil {
		return err
	}
	_, err = c.DescribeTaskQueue(ctx, readyProbeQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	return err
}

// readyProbeQueue is a task queue no worker polls; describing it only
// reaches the matching service.
const readyProbeQueue = "bookonce-ready-probe"

func serverConfig(host string, port int, fixed []int, st stores) (*config.Config, error) {
	services, err := servicePorts(host, port, fixed)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	return &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: host},
		},
		Persistence: config.Persistence{
			DefaultStore:     mainStore,
			VisibilityStore:  visibilityStore,
			NumHistoryShards: max(1, st.shards),
			DataStores:       map[string]config.DataStore{mainStore: {SQL: st.main}, visibilityStore: {SQL: st.visibility}},
		},
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        "active",
			CurrentClusterName:       "active",
			ClusterInformation: map[string]cluster.ClusterInformation{
				"active": {Enabled: true, InitialFailoverVersion: 1, RPCAddress: addr},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services:            services,
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
			History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
			Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
		}},
		// The server's internal workers dial this address.
		PublicClient: config.PublicClient{HostPort: addr},
	}, nil
}

// servicePorts places the four services: the frontend's gRPC on port, the
// other gRPC ports and the membership ports from fixed (seven, in order)
// or free ones.
func servicePorts(host string, port int, fixed []int) (map[string]config.Service, error) {
	if len(fixed) != 0 && len(fixed) != 7 {
		return nil, fmt.Errorf("Temporal internal ports: want 7, got %d", len(fixed))
	}
	next := func() (int, error) {
		if len(fixed) > 0 {
			p := fixed[0]
			fixed = fixed[1:]
			return p, nil
		}
		return freePort(host)
	}
	services := map[string]config.Service{}
	for i, name := range []string{"frontend", "history", "matching", "worker"} {
		grpcPort := port
		if i > 0 {
			p, err := next()
			if err != nil {
				return nil, err
			}
			grpcPort = p
		}
		membership, err := next()
		if err != nil {
			return nil, err
		}
		services[name] = config.Service{RPC: config.RPC{GRPCPort: grpcPort, MembershipPort: membership, BindOnIP: host}}
	}
	return services, nil
}

func resolveAddress(addr string) (string, int, error) {
	if addr == "" {
		addr = "127.0.0.1:7233"
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("Temporal address %q: %w", addr, err)
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", 0, fmt.Errorf("Temporal address %q: bad port", addr)
	}
	if port == 0 {
		if port, err = freePort(host); err != nil {
			return "", 0, err
		}
	}
	return host, port, nil
}

// probeFree fails early with a clear message when another server (often
// `temporal server start-dev`) already holds the port.
func probeFree(host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d is taken (another Temporal server?): stop it, or set TEMPORAL_ADDRESS to use it instead of the embedded one: %w", port, err)
	}
	return l.Close()
}
