package shopcal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Channel is a push channel of one resource's calendar: a Google watch
// channel or a Microsoft Graph subscription that calls the gateway when
// the calendar changes.
type Channel struct {
	Tenant, Resource string
	// Provider is "google" or "microsoft"; Calendar names the calendar
	// watched (Watcher.Watching), so a resource connected to another
	// calendar is watched anew.
	Provider, Calendar string
	// ID is bookonce's name of the channel (Google's channel ID, the
	// first part of Graph's clientState); Secret comes back with every
	// notification and is kept only as its hash.
	ID, Secret string
	// ExternalID is the provider's: Google's resourceId, Graph's
	// subscription ID.
	ExternalID string
	Expires    time.Time
}

// newChannel names a new channel of a resource's calendar and draws its
// secret.
func newChannel(tenant, resource, provider, calendar string) Channel {
	id, secret := make([]byte, 16), make([]byte, 32)
	_, _ = rand.Read(id) // crypto/rand.Read never fails
	_, _ = rand.Read(secret)
	return Channel{Tenant: tenant, Resource: resource, Provider: provider, Calendar: calendar,
		ID: "bookonce-" + hex.EncodeToString(id), Secret: base64.RawURLEncoding.EncodeToString(secret)}
}

func secretHash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Channels keeps the push channels in PostgreSQL, one per resource, and
// carries a notification from the gateway that received it to the
// workers, which read the calendar again (PostgreSQL's NOTIFY: a worker
// that is not listening misses it, and the next poll reads the calendar
// anyway).
type Channels struct {
	Pool *pgxpool.Pool
}

// notifyTopic is the NOTIFY channel the workers listen on.
const notifyTopic = "bookonce_shop_calendar"

const channelColumns = `tenant_id, resource_id, provider, calendar, channel_id, external_id, expires_at`

func scanChannel(row pgx.Row) (Channel, error) {
	var c Channel
	err := row.Scan(&c.Tenant, &c.Resource, &c.Provider, &c.Calendar, &c.ID, &c.ExternalID, &c.Expires)
	return c, err
}

// Current is the resource's channel; found is false when it has none.
func (c *Channels) Current(ctx context.Context, tenant, resource string) (ch Channel, found bool, err error) {
	ch, err = scanChannel(c.Pool.QueryRow(ctx, `SELECT `+channelColumns+` FROM calendar_channels
		WHERE tenant_id = $1 AND resource_id = $2`, tenant, resource))
	if errors.Is(err, pgx.ErrNoRows) {
		return Channel{}, false, nil
	}
	return ch, err == nil, err
}

// Replace makes ch the resource's channel and returns the one it
// replaced (replaced false: none), which the caller stops at the
// provider: a notification of the old one is refused from now on.
func (c *Channels) Replace(ctx context.Context, ch Channel) (old Channel, replaced bool, err error) {
	err = pgx.BeginFunc(ctx, c.Pool, func(tx pgx.Tx) error {
		old, err = scanChannel(tx.QueryRow(ctx, `SELECT `+channelColumns+` FROM calendar_channels
			WHERE tenant_id = $1 AND resource_id = $2 FOR UPDATE`, ch.Tenant, ch.Resource))
		replaced = err == nil
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO calendar_channels (`+channelColumns+`, secret_hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (tenant_id, resource_id) DO UPDATE SET provider = EXCLUDED.provider, calendar = EXCLUDED.calendar,
				channel_id = EXCLUDED.channel_id, external_id = EXCLUDED.external_id, expires_at = EXCLUDED.expires_at,
				secret_hash = EXCLUDED.secret_hash, created_at = now()`,
			ch.Tenant, ch.Resource, ch.Provider, ch.Calendar, ch.ID, ch.ExternalID, ch.Expires, secretHash(ch.Secret))
		return err
	})
	if err != nil {
		return Channel{}, false, fmt.Errorf("store the push channel of %s/%s: %w", ch.Tenant, ch.Resource, err)
	}
	return old, replaced, nil
}

// Extend records a renewed channel's new expiry.
func (c *Channels) Extend(ctx context.Context, ch Channel) error {
	_, err := c.Pool.Exec(ctx, `UPDATE calendar_channels SET expires_at = $2 WHERE channel_id = $1`, ch.ID, ch.Expires)
	return err
}

// Remove forgets the channel id (the provider ended it): the next sweep
// opens a new one.
func (c *Channels) Remove(ctx context.Context, id string) error {
	_, err := c.Pool.Exec(ctx, `DELETE FROM calendar_channels WHERE channel_id = $1`, id)
	return err
}

// Verify finds the channel a notification names and checks the secret
// it carries; ok is false for an unknown channel (stopped, replaced) or a
// wrong secret.
func (c *Channels) Verify(ctx context.Context, provider, id, secret string) (ch Channel, ok bool, err error) {
	var hash []byte
	err = c.Pool.QueryRow(ctx, `SELECT `+channelColumns+`, secret_hash FROM calendar_channels
		WHERE channel_id = $1 AND provider = $2`, id, provider).
		Scan(&ch.Tenant, &ch.Resource, &ch.Provider, &ch.Calendar, &ch.ID, &ch.ExternalID, &ch.Expires, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return Channel{}, false, nil
	}
	if err != nil {
		return Channel{}, false, err
	}
	return ch, subtle.ConstantTimeCompare(hash, secretHash(secret)) == 1, nil
}

// changed is a NOTIFY payload: which resource's calendar changed.
type changed struct {
	Tenant   string `json:"t"`
	Resource string `json:"r"`
}

// Changed tells the listening workers that the resource's calendar
// changed.
func (c *Channels) Changed(ctx context.Context, tenant, resource string) error {
	payload, err := json.Marshal(changed{tenant, resource})
	if err != nil {
		return err
	}
	_, err = c.Pool.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyTopic, string(payload))
	return err
}

// Listen calls fn for every calendar the gateway was told changed, until
// ctx ends or the connection fails (the error; the caller listens again).
// It calls listening once it listens. fn must not block.
func (c *Channels) Listen(ctx context.Context, listening func(), fn func(tenant, resource string)) error {
	pc, err := c.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection that LISTENed is not given back to the pool.
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+notifyTopic); err != nil {
		return err
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var ch changed
		if json.Unmarshal([]byte(n.Payload), &ch) == nil {
			fn(ch.Tenant, ch.Resource)
		}
	}
}
