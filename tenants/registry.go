package tenants

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/internal/apitoken"
)

// DefaultReloadInterval is how often Run reloads unless told otherwise: a
// change applied with `starter tenants apply` reaches every process within
// this long, without a restart.
const DefaultReloadInterval = 10 * time.Second

// Registry is the configured tenants as the running processes see them,
// loaded from PostgreSQL. Lookups read an immutable snapshot that Reload
// swaps atomically, so the Registry is safe for concurrent use and a
// lookup never sees half of an apply.
type Registry struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	snap atomic.Pointer[snapshot]
}

type snapshot struct {
	all      []*Profile // by ID
	byID     map[string]*Profile
	byNumber map[string]*Profile
	tokens   []tokenEntry
}

type tokenEntry struct {
	digest  []byte
	profile *Profile
}

// NewRegistry returns an empty Registry on pool; call Reload (or use
// LoadRegistry) before the first lookup. log may be nil.
func NewRegistry(pool *pgxpool.Pool, log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Registry{pool: pool, log: log}
	r.snap.Store(&snapshot{byID: map[string]*Profile{}, byNumber: map[string]*Profile{}})
	return r
}

// LoadRegistry returns a Registry loaded once.
func LoadRegistry(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) (*Registry, error) {
	r := NewRegistry(pool, log)
	if err := r.Reload(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Reload reads every tenant from the database in one consistent snapshot
// (a repeatable-read transaction, so an apply is seen whole or not at all)
// and swaps it in. On an error the previous tenants stay in place.
func (r *Registry) Reload(ctx context.Context) error {
	var state File
	err := pgx.BeginTxFunc(ctx, r.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		state, err = loadState(ctx, tx)
		return err
	})
	if err != nil {
		return fmt.Errorf("reload tenants: %w", err)
	}
	s := &snapshot{byID: map[string]*Profile{}, byNumber: map[string]*Profile{}}
	for _, t := range state.Tenants {
		p, err := newProfile(t)
		if err != nil {
			return fmt.Errorf("reload tenants: %w", err)
		}
		s.all = append(s.all, p)
		s.byID[p.ID] = p
		for _, n := range p.Numbers {
			s.byNumber[n] = p
		}
		for _, h := range p.TokenHashes {
			d, err := hex.DecodeString(h)
			if err != nil {
				return fmt.Errorf("reload tenants: token digest of %s: %w", p.ID, err)
			}
			s.tokens = append(s.tokens, tokenEntry{digest: d, profile: p})
		}
	}
	r.snap.Store(s)
	return nil
}

// Run reloads every interval (DefaultReloadInterval if zero) until ctx
// ends. A failed reload is logged and the previous tenants stay in use;
// the next tick tries again.
func (r *Registry) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultReloadInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.Reload(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("tenants not reloaded; keeping the previous configuration", "err", err)
			}
		}
	}
}

// Get returns the tenant with the given ID.
func (r *Registry) Get(id string) (*Profile, bool) {
	p, ok := r.snap.Load().byID[id]
	return p, ok
}

// All returns every tenant, sorted by ID.
func (r *Registry) All() []*Profile {
	return append([]*Profile(nil), r.snap.Load().all...)
}

// ByNumber returns the tenant a Twilio number belongs to: the To of a call
// or message, "whatsapp:+49…" and "+49…" alike.
func (r *Registry) ByNumber(to string) (*Profile, bool) {
	p, ok := r.snap.Load().byNumber[NormaliseNumber(to)]
	return p, ok
}

// ByToken returns the tenant of an API bearer token. A token that is not
// well-formed (apitoken.Check: prefix, length, checksum) is refused before
// any lookup, so only tokens with bookonce's entropy are ever accepted;
// a well-formed one is hashed and compared with every digest in constant
// time, so neither the answer time nor the database reveals how close a
// guess was.
func (r *Registry) ByToken(plain string) (*Profile, bool) {
	if apitoken.Check(plain) != nil {
		return nil, false
	}
	sum := sha256.Sum256([]byte(plain))
	var found *Profile
	for _, e := range r.snap.Load().tokens {
		if subtle.ConstantTimeCompare(sum[:], e.digest) == 1 {
			found = e.profile
		}
	}
	return found, found != nil
}

// TokenDigest returns the hex SHA-256 digest of a token, as the file's
// api_token_sha256 lists it.
func TokenDigest(plain string) string {
	return apitoken.Digest(plain)
}

// Authenticate returns the ID of the tenant an API bearer token belongs
// to (ByToken), in the shape web.BearerAuth takes.
func (r *Registry) Authenticate(token string) (string, bool) {
	p, ok := r.ByToken(token)
	if !ok {
		return "", false
	}
	return p.ID, true
}

// Zone returns a tenant's time zone, nil for an unknown tenant.
func (r *Registry) Zone(tenant string) *time.Location {
	if p, ok := r.Get(tenant); ok {
		return p.Location
	}
	return nil
}

// TenantOfDigest returns the ID of the tenant that lists a token digest
// (hex SHA-256) in api_token_sha256. A digest grants nothing by itself:
// the ops page uses it to check that a session's token is still configured.
func (r *Registry) TenantOfDigest(digest string) (string, bool) {
	d, err := hex.DecodeString(digest)
	if err != nil {
		return "", false
	}
	for _, e := range r.snap.Load().tokens {
		if subtle.ConstantTimeCompare(d, e.digest) == 1 {
			return e.profile.ID, true
		}
	}
	return "", false
}
