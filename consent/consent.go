// Package consent keeps what each customer allowed a shop to send them:
// a customer who writes STOP (or a keyword the shop configured) gets no
// more reminders from that shop, on any channel, from that moment; START
// takes it back. Every change is stored with the message that made it
// and when, so the shop can show the trail; the latest change is the
// customer's state, and none means subscribed.
package consent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/internal/customerid"
)

// Action is one consent change.
type Action string

// The changes a customer can make.
const (
	// OptOut: no more reminders (STOP, STOPP, ABMELDEN, UNSUBSCRIBE).
	OptOut Action = "opt_out"
	// OptIn: reminders again (START, ANMELDEN).
	OptIn Action = "opt_in"
)

// Change is one consent change of a customer (an E.164 number) of a
// tenant, made by the inbound message EventID on Channel at At. The
// number is not stored: the trail is keyed by the customer key.
type Change struct {
	Tenant   string    `json:"tenant"`
	Customer string    `json:"customer"`
	Action   Action    `json:"action"`
	Channel  string    `json:"channel"`
	EventID  string    `json:"event_id"`
	At       time.Time `json:"at"`
}

// ErrInvalid: a change that no retry can record (an unknown action, a
// number that is not E.164, no customer keys).
var ErrInvalid = errors.New("consent: invalid change")

// Store is the consent trail in PostgreSQL (table consent_events), keyed
// by Keys (the customer key of the workflows and search attributes), so
// that a number reaches the same customer from every channel.
type Store struct {
	Pool *pgxpool.Pool
	Keys *customerid.Keyer
}

// key is the customer key of number at tenant.
func (s *Store) key(tenant, number string) (customerid.Key, error) {
	if s.Keys == nil {
		return "", fmt.Errorf("%w: no customer keys configured", ErrInvalid)
	}
	k, err := s.Keys.Key(tenant, strings.TrimPrefix(number, "whatsapp:"))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return k, nil
}

// Record stores c and reports whether it changed the customer's state
// (an opt-out of a subscribed customer, an opt-in of an opted-out one).
// The same message recorded again (a redelivery, a retried activity) is
// no second change: it reports what its first recording reported.
func (s *Store) Record(ctx context.Context, c Change) (changed bool, err error) {
	if c.Action != OptOut && c.Action != OptIn {
		return false, fmt.Errorf("%w: unknown action %q", ErrInvalid, c.Action)
	}
	key, err := s.key(c.Tenant, c.Customer)
	if err != nil {
		return false, err
	}
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		// One writer per customer at a time: "changed" compares with the
		// state the change follows.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('consent:' || $1 || ':' || $2))`, c.Tenant, key); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO consent_events (tenant_id, customer_key, action, channel, event_id, at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant_id, event_id) DO NOTHING RETURNING id`,
			c.Tenant, key, string(c.Action), c.Channel, c.EventID, c.At).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			err = tx.QueryRow(ctx, `SELECT id FROM consent_events WHERE tenant_id = $1 AND event_id = $2`, c.Tenant, c.EventID).Scan(&id)
		}
		if err != nil {
			return err
		}
		var before string
		err = tx.QueryRow(ctx, `SELECT action FROM consent_events WHERE tenant_id = $1 AND customer_key = $2 AND id < $3
			ORDER BY id DESC LIMIT 1`, c.Tenant, key, id).Scan(&before)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			changed = c.Action == OptOut // none before: subscribed
		case err != nil:
			return err
		default:
			changed = before != string(c.Action)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("consent: record %s: %w", c.Action, err)
	}
	return changed, nil
}

// OptedOut reports whether the latest change of the customer number (or
// "whatsapp:" number) is an opt-out.
func (s *Store) OptedOut(ctx context.Context, tenant, number string) (bool, error) {
	customerKey, err := s.key(tenant, number)
	if err != nil {
		return false, err
	}
	var action string
	err = s.Pool.QueryRow(ctx, `SELECT action FROM consent_events WHERE tenant_id = $1 AND customer_key = $2
		ORDER BY id DESC LIMIT 1`, tenant, customerKey).Scan(&action)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("consent: read: %w", err)
	}
	return action == string(OptOut), nil
}

// Trail lists a customer's changes, oldest first: what a shop shows when
// asked why a customer got (or did not get) a message. Customer is left
// empty: the trail holds keys, not numbers.
func (s *Store) Trail(ctx context.Context, tenant, number string) ([]Change, error) {
	customerKey, err := s.key(tenant, number)
	if err != nil {
		return nil, err
	}
	rows, err := s.Pool.Query(ctx, `SELECT tenant_id, action, channel, event_id, at FROM consent_events
		WHERE tenant_id = $1 AND customer_key = $2 ORDER BY id`, tenant, customerKey)
	if err != nil {
		return nil, fmt.Errorf("consent: trail: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Change, error) {
		var c Change
		var action string
		err := r.Scan(&c.Tenant, &action, &c.Channel, &c.EventID, &c.At)
		c.Action = Action(action)
		return c, err
	})
}
