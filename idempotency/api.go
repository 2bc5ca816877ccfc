package idempotency

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bookonce/bookonce/internal/payloadcrypt"
)

// ProblemStyle selects the shape of the error documents the middleware
// writes, because the calendar API speaks RFC 9457 and the payment API must
// look like Stripe to stripe-go.
type ProblemStyle int

const (
	// ProblemJSON writes application/problem+json (RFC 9457) documents.
	ProblemJSON ProblemStyle = iota
	// StripeJSON writes {"error":{"type":...,"code":...,"message":...}} as
	// application/json, the shape stripe-go parses.
	StripeJSON
)

// Options configures a Store. The zero value is usable: every field has a
// default.
type Options struct {
	// TTL is how long a key is retained and replayed (IDEMPOTENCY_TTL);
	// default 72h, the replay horizon of the whole business process.
	TTL time.Duration
	// Lease is how long a pending claim is protected from takeover; default
	// 30s. It must exceed the route's worst-case run time: a holder that
	// outlives its lease is fenced and its effect rolled back.
	Lease time.Duration
	// QuotaPerMinute caps new keys per tenant per minute; 0 = unlimited.
	QuotaPerMinute int
	// Now is the clock; nil means time.Now. Tests inject it.
	Now func() time.Time
	// Registerer receives the metrics; nil means metrics are not registered
	// (they are still counted, which keeps the code paths identical).
	Registerer prometheus.Registerer
	// ProblemStyle is the error document shape; default ProblemJSON.
	ProblemStyle ProblemStyle
	// Logger receives one structured line per keyed request (tenant,
	// operation, key, fingerprint, state, replayed, status, duration); nil
	// logs nothing.
	Logger *slog.Logger
	// PlainTransaction turns the exactly-once guarantee OFF: Middleware runs
	// the handler in a plain transaction (same Tx, Keep and commit rules)
	// without claiming or storing any key. For benchmarks (bench/) only.
	PlainTransaction bool
	// Sealer encrypts stored response bodies at rest (they may quote a
	// customer's phone number): the payload key set. Nil stores them in
	// clear, as without BOOKONCE_PAYLOAD_KEYS; rows sealed earlier then
	// fail to replay with payloadcrypt.ErrNoKeys.
	Sealer *payloadcrypt.Codec
}

// Default option values.
const (
	DefaultTTL   = 72 * time.Hour
	DefaultLease = 30 * time.Second
	// MaxKeyLength is the longest accepted Idempotency-Key, in bytes.
	MaxKeyLength = 255
	// MaxBodyBytes is the largest request body the middleware buffers.
	MaxBodyBytes = 1 << 20
)

// Store keeps idempotency keys in PostgreSQL. It is safe for concurrent use
// by any number of goroutines and processes sharing the database.
type Store struct {
	pool    *pgxpool.Pool
	ttl     time.Duration
	lease   time.Duration
	quota   int
	clock   func() time.Time
	style   ProblemStyle
	metrics *Metrics
	plain   bool
	log     *slog.Logger
	sealer  *payloadcrypt.Codec
}

// NewStore returns a Store on pool. Metrics are registered on
// opts.Registerer when it is set; a Store created twice on one registry
// shares the already registered collectors.
func NewStore(pool *pgxpool.Pool, opts Options) *Store {
	s := &Store{
		pool:    pool,
		ttl:     opts.TTL,
		lease:   opts.Lease,
		quota:   opts.QuotaPerMinute,
		clock:   opts.Now,
		style:   opts.ProblemStyle,
		metrics: NewMetrics(opts.Registerer),
		plain:   opts.PlainTransaction,
		log:     opts.Logger,
		sealer:  opts.Sealer,
	}
	if s.ttl <= 0 {
		s.ttl = DefaultTTL
	}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	return s
}

// Metrics returns the Store's collectors, for tests and dashboards.
func (s *Store) Metrics() *Metrics { return s.metrics }

// now truncates to microseconds because PostgreSQL timestamptz does; a
// comparison against a value read back must not differ by nanoseconds.
func (s *Store) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }

// ErrNotFound says that no live record exists for a key.
var ErrNotFound = errors.New("idempotency: key not found")

// Key states.
const (
	StatePending   = "pending"
	StateCompleted = "completed"
)

// Record is what a key did: its scope, state, and (once completed) the
// stored response and the resource it created or affected.
type Record struct {
	Tenant, Operation, Key, State string
	StatusCode                    int
	Body                          []byte
	ResourceType, ResourceID      string
	CreatedAt, ExpiresAt          time.Time
	Replays                       int
}

type ctxKey struct{}

// requestState is what the middleware shares with the handler through the
// request context.
type requestState struct {
	mu           sync.Mutex
	tx           pgx.Tx
	keep         bool
	resourceType string
	resourceID   string
}

func stateOf(ctx context.Context) *requestState {
	st, _ := ctx.Value(ctxKey{}).(*requestState)
	return st
}

// Tx returns the transaction the middleware opened for this request.
// Handlers do ALL their writes through it, so their effect and the stored
// response commit together (or not at all). The middleware alone ends it:
// its Commit and Rollback do nothing (savepoints via Begin work as usual),
// and a 4xx (without Keep) or 5xx answer rolls it back.
func Tx(ctx context.Context) (pgx.Tx, bool) {
	st := stateOf(ctx)
	if st == nil || st.tx == nil {
		return nil, false
	}
	return st.tx, true
}

// Keep marks the response being written as a decided outcome that is stored
// and replayed even though it is a 4xx (e.g. 409 slot_unavailable, Stripe's
// 402 card_declined). Without Keep, 2xx and 3xx are stored; 4xx are not
// (the transaction is rolled back and the key released so a corrected retry
// may proceed). 5xx are never stored, Keep or not: a server error is not a
// decision. Keep outside the middleware does nothing.
func Keep(ctx context.Context) {
	if st := stateOf(ctx); st != nil {
		st.mu.Lock()
		st.keep = true
		st.mu.Unlock()
	}
}

// SetResource records the type and id of the resource the request created
// or affected on the key row, so an operator or client can reconcile by key.
func SetResource(ctx context.Context, typ, id string) {
	if st := stateOf(ctx); st != nil {
		st.mu.Lock()
		st.resourceType, st.resourceID = typ, id
		st.mu.Unlock()
	}
}

// snapshot reads what the handler marked, under the lock because a handler
// may call Keep or SetResource from a goroutine of its own.
func (st *requestState) snapshot() (keep bool, typ, id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.keep, st.resourceType, st.resourceID
}
