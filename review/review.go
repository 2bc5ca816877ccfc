// Package review is the human review queue: cases for outcomes the system
// must not decide alone (an unknown commit status, a potential cross-channel
// duplicate). A person resolves a case; the waiting workflow continues.
package review

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Reason says why a case was opened.
type Reason string

// Reasons.
const (
	ReasonUnknownOutcome     Reason = "unknown_outcome"
	ReasonPotentialDuplicate Reason = "potential_duplicate"
	// ReasonCompensationFailed: an undo (release, void, refund, cancel
	// booking, close intent) ended with a final error or outlived its
	// retry bound; what it should have undone may still be live.
	ReasonCompensationFailed Reason = "compensation_failed"
	// ReasonOrphanedEffect: the reconciler found an effect (a booking, a
	// captured deposit) whose saga ended without deciding it, and it is not
	// safe to undo alone. No workflow waits for the decision: the person
	// acts (calls the customer, refunds, confirms) and resolves the case.
	ReasonOrphanedEffect Reason = "orphaned_effect"
	// ReasonCancellationRequest: a customer wants to cancel and the
	// system cannot honour it at once (already confirmed, several or no
	// candidate bookings, an unknown state); a person acts on it.
	ReasonCancellationRequest Reason = "cancellation_request"
	// ReasonChangeRequest: a customer wants to move a confirmed booking
	// and the booking could not be asked (its lifecycle unreachable or
	// gone); a person moves it or calls back.
	ReasonChangeRequest Reason = "change_request"
	// ReasonShopCalendar: a booking could not be carried into the shop's
	// own calendar (package shopcal): its credentials were refused, the
	// calendar is gone, or it did not answer within the retry bound.
	// Staff do not see the booking where they work until a person
	// reconnects the calendar (or enters the booking) and resolves it.
	ReasonShopCalendar Reason = "shop_calendar"
	// ReasonCalendarConflict: staff entered an event in the shop's own
	// calendar over a booking the agent had made (the front desk and the
	// agent raced for the slot). bookonce changes neither: the customer
	// keeps the booking they were told of until a person decides. No
	// workflow waits: the person moves or cancels the booking, or staff's
	// event, then resolves the case (proceed: kept; abandon: undone).
	ReasonCalendarConflict Reason = "calendar_conflict"
	// ReasonCalendarConnection: a resource's own calendar at the shop
	// refuses bookonce for good (consent withdrawn, the calendar deleted,
	// credentials refused), so what staff enter there no longer blocks
	// the slot. No workflow waits: a person reconnects the calendar and
	// resolves the case (proceed); one is opened a day while it lasts.
	ReasonCalendarConnection Reason = "calendar_connection"
)

// Action is a reviewer's decision.
type Action string

// Actions. Retry runs the uncertain step again (after the reviewer checked
// it did not happen); Abandon gives up and compensates; Proceed accepts
// that it happened; Merge and Separate decide potential duplicates.
const (
	ActionRetry    Action = "retry"
	ActionAbandon  Action = "abandon"
	ActionProceed  Action = "proceed"
	ActionMerge    Action = "merge"
	ActionSeparate Action = "separate"
)

// Case is one review case.
type Case struct {
	ID         string          `json:"id"`
	Tenant     string          `json:"tenant"`
	WorkflowID string          `json:"workflow_id"`
	Reason     Reason          `json:"reason"`
	Details    json.RawMessage `json:"details"`
	Status     string          `json:"status"`
	Resolution Action          `json:"resolution,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
}

// Store keeps cases in PostgreSQL.
type Store struct{ Pool *pgxpool.Pool }

// ErrNotFound is returned for an unknown case.
var ErrNotFound = errors.New("review case not found")

const columns = `id, tenant_id, workflow_id, reason, details, status, coalesce(resolution, ''), created_at`

func scan(row pgx.Row) (Case, error) {
	var c Case
	err := row.Scan(&c.ID, &c.Tenant, &c.WorkflowID, &c.Reason, &c.Details, &c.Status, &c.Resolution, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Case{}, ErrNotFound
	}
	return c, err
}

// Open opens a case under key, or returns the case already opened with it:
// a retried activity must not open a second case.
func (s *Store) Open(ctx context.Context, key string, c Case) (Case, error) {
	if len(c.Details) == 0 {
		c.Details = json.RawMessage("{}")
	}
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	_, err := s.Pool.Exec(ctx, `INSERT INTO review_cases (id, tenant_id, workflow_id, reason, details, idempotency_key)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (idempotency_key) DO NOTHING`,
		"rc_"+hex.EncodeToString(b), c.Tenant, c.WorkflowID, string(c.Reason), c.Details, key)
	if err != nil {
		return Case{}, fmt.Errorf("open review case: %w", err)
	}
	return scan(s.Pool.QueryRow(ctx, `SELECT `+columns+` FROM review_cases WHERE idempotency_key = $1`, key))
}

// HasCase reports whether any case (open or resolved) of reason exists for
// a workflow, so a sweep that runs again does not open a second one.
func (s *Store) HasCase(ctx context.Context, tenant, workflowID string, reason Reason) (bool, error) {
	var exists bool
	err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM review_cases WHERE tenant_id = $1 AND workflow_id = $2 AND reason = $3)`,
		tenant, workflowID, string(reason)).Scan(&exists)
	if err != nil {
		return false, fmt.Errorf("look up review cases of %s: %w", workflowID, err)
	}
	return exists, nil
}

// Get returns a case.
func (s *Store) Get(ctx context.Context, id string) (Case, error) {
	return scan(s.Pool.QueryRow(ctx, `SELECT `+columns+` FROM review_cases WHERE id = $1`, id))
}

// ListOpen lists a tenant's open cases, oldest first.
func (s *Store) ListOpen(ctx context.Context, tenant string) ([]Case, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+columns+` FROM review_cases WHERE tenant_id = $1 AND status = 'open' ORDER BY created_at, id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("list review cases: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Case, error) { return scan(r) })
}

// Resolve records a decision once; resolving a resolved case with the same
// action succeeds (a double click), with another action fails with
// ErrAlreadyResolved. Resolver.Resolve is what callers use: it also checks
// the action and signals the waiting workflow.
func (s *Store) Resolve(ctx context.Context, id string, action Action) (Case, error) {
	tag, err := s.Pool.Exec(ctx, `UPDATE review_cases SET status = 'resolved', resolution = $2, resolved_at = now()
		WHERE id = $1 AND status = 'open'`, id, string(action))
	if err != nil {
		return Case{}, fmt.Errorf("resolve review case: %w", err)
	}
	c, err := s.Get(ctx, id)
	if err != nil {
		return Case{}, err
	}
	if tag.RowsAffected() == 0 && c.Resolution != action {
		return c, fmt.Errorf("review case %s was %w as %s", id, ErrAlreadyResolved, c.Resolution)
	}
	return c, nil
}

// Repoint moves the open cases of a tenant's workflow from to workflow to,
// so that resolving them signals the workflow that now waits for them (a
// conversation moved from its legacy ID). It returns how many moved.
func (s *Store) Repoint(ctx context.Context, tenant, from, to string) (int64, error) {
	tag, err := s.Pool.Exec(ctx, `UPDATE review_cases SET workflow_id = $3
		WHERE tenant_id = $1 AND workflow_id = $2 AND status = 'open'`, tenant, from, to)
	if err != nil {
		return 0, fmt.Errorf("repoint review cases: %w", err)
	}
	return tag.RowsAffected(), nil
}
