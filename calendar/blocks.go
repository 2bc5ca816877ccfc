package calendar

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bookonce/bookonce/internal/web"
)

// Block is a time a resource is busy outside bookonce: an event staff put
// in the shop's own calendar (package shopcal), by its UID there. One
// instance of a recurring event is one block.
type Block struct {
	UID   string    `json:"uid"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// BlocksRequest is the body of PUT /v1/resources/{id}/blocks: every
// block of the resource that overlaps [From, To), as the shop's calendar
// shows it now. It replaces what was mirrored for that window.
type BlocksRequest struct {
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Blocks []Block   `json:"blocks"`
}

// Conflict is a confirmed booking a block lies over: staff entered
// something at a time the agent had already booked.
type Conflict struct {
	Booking Booking `json:"booking"`
	Block   Block   `json:"block"`
}

// BlocksResult answers PUT /v1/resources/{id}/blocks: how many blocks
// the window holds now, and every confirmed booking one of them lies
// over (all of them, each time: the caller opens its case once).
type BlocksResult struct {
	Object     string     `json:"object"`
	ResourceID string     `json:"resource_id"`
	Stored     int        `json:"stored"`
	Conflicts  []Conflict `json:"conflicts"`
}

// Limits of one PUT: the mirror's horizon, and more blocks than a
// resource's calendar can sensibly hold in it.
const (
	maxBlocksWindow = 400 * 24 * time.Hour
	maxBlocks       = 10000
)

// putBlocks replaces a resource's blocks in a window: one transaction, so
// a reader sees the old set or the new one. PUT is idempotent by itself,
// so it takes no Idempotency-Key: sending the same set again changes
// nothing.
func (s *Server) putBlocks(w http.ResponseWriter, r *http.Request) {
	ctx, tenant, resource := r.Context(), tenantOf(r), r.PathValue("id")
	var req BlocksRequest
	if p := decodeStrict(r, &req); p != nil {
		web.WriteProblem(w, p)
		return
	}
	if p := validateBlocks(req); p != nil {
		web.WriteProblem(w, p)
		return
	}
	tx, err := s.Pool.Begin(ctx)
	if err != nil {
		s.internalError(w, r, "put blocks", err)
		return
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var known bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM calendar_resources WHERE tenant_id = $1 AND id = $2)`, tenant, resource).Scan(&known); err != nil {
		s.internalError(w, r, "put blocks", err)
		return
	}
	if !known {
		web.WriteProblem(w, web.NewProblem(http.StatusUnprocessableEntity, CodeUnknownResource, "unknown resource "+quote(resource)+"; GET /v1/resources lists them"))
		return
	}
	res, err := replaceBlocks(ctx, tx, tenant, resource, req, s.now())
	if err == nil {
		err = tx.Commit(ctx)
	}
	if err != nil {
		s.internalError(w, r, "put blocks", err)
		return
	}
	web.WriteJSON(w, http.StatusOK, res)
}

func replaceBlocks(ctx context.Context, tx pgx.Tx, tenant, resource string, req BlocksRequest, now time.Time) (BlocksResult, error) {
	window := slotRange(req.From, req.To)
	if _, err := tx.Exec(ctx, `DELETE FROM calendar_blocks WHERE tenant_id = $1 AND resource_id = $2 AND slot && $3`, tenant, resource, window); err != nil {
		return BlocksResult{}, fmt.Errorf("clear blocks: %w", err)
	}
	batch := &pgx.Batch{}
	for _, b := range req.Blocks {
		batch.Queue(`INSERT INTO calendar_blocks (tenant_id, resource_id, uid, slot, synced_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (tenant_id, resource_id, uid, slot) DO UPDATE SET synced_at = excluded.synced_at`,
			tenant, resource, b.UID, slotRange(b.Start.UTC(), b.End.UTC()), now)
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return BlocksResult{}, fmt.Errorf("store blocks: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT `+reservationColumns+`, block_uid, block_start, block_end FROM (
		  SELECT r.*, b.uid AS block_uid, lower(b.slot) AS block_start, upper(b.slot) AS block_end
		  FROM calendar_reservations r JOIN calendar_blocks b
		    ON b.tenant_id = r.tenant_id AND b.resource_id = r.resource_id AND b.slot && r.slot
		  WHERE r.tenant_id = $1 AND r.resource_id = $2 AND r.status = 'confirmed' AND b.slot && $3) c
		ORDER BY lower(slot), id, block_uid`, tenant, resource, window)
	if err != nil {
		return BlocksResult{}, fmt.Errorf("find conflicts: %w", err)
	}
	conflicts, err := pgx.CollectRows(rows, scanConflict)
	if err != nil {
		return BlocksResult{}, fmt.Errorf("find conflicts: %w", err)
	}
	return BlocksResult{Object: "blocks", ResourceID: resource, Stored: len(req.Blocks), Conflicts: nonNil(conflicts)}, nil
}

func scanConflict(row pgx.CollectableRow) (Conflict, error) {
	var h Hold
	var c Conflict
	var slot pgtype.Range[pgtype.Timestamptz]
	err := row.Scan(&h.ID, &h.Status, &h.ResourceID, &h.Service, &h.Customer, &h.Reference, &slot, &h.ExpiresAt, &h.BookingID,
		&h.DeliberateSecond, &h.CreatedAt, &c.Block.UID, &c.Block.Start, &c.Block.End)
	if err != nil {
		return c, err
	}
	h.Start, h.End, h.CreatedAt = slot.Lower.Time.UTC(), slot.Upper.Time.UTC(), h.CreatedAt.UTC()
	c.Booking = bookingOf(h)
	c.Block.Start, c.Block.End = c.Block.Start.UTC(), c.Block.End.UTC()
	return c, nil
}

// blocked reports whether a block of the resource overlaps [start, end).
func blocked(ctx context.Context, q querier, tenant, resource string, start, end time.Time) (bool, error) {
	var b bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM calendar_blocks WHERE tenant_id = $1 AND resource_id = $2 AND slot && $3)`,
		tenant, resource, slotRange(start, end)).Scan(&b)
	return b, err
}

func validateBlocks(req BlocksRequest) *web.Problem {
	var errs []web.FieldError
	switch {
	case req.From.IsZero() || req.To.IsZero():
		errs = append(errs, web.FieldError{Field: "from", Detail: "from and to are required, RFC 3339 with a zone"})
	case !req.To.After(req.From) || req.To.Sub(req.From) > maxBlocksWindow:
		errs = append(errs, web.FieldError{Field: "to", Detail: "must be after from and at most 400 days later"})
	}
	if len(req.Blocks) > maxBlocks {
		errs = append(errs, web.FieldError{Field: "blocks", Detail: fmt.Sprintf("at most %d in one window; send a shorter one", maxBlocks)})
	}
	for i, b := range req.Blocks {
		field := fmt.Sprintf("blocks[%d]", i)
		switch {
		case strings.TrimSpace(b.UID) == "" || len(b.UID) > 1024:
			errs = append(errs, web.FieldError{Field: field + ".uid", Detail: "required, at most 1024 bytes"})
		case b.Start.IsZero() || !b.End.After(b.Start):
			errs = append(errs, web.FieldError{Field: field + ".end", Detail: "start and end are required, end after start"})
		case !b.Start.Before(req.To) || !req.From.Before(b.End):
			errs = append(errs, web.FieldError{Field: field, Detail: "lies outside [from, to)"})
		}
		if len(errs) >= 20 {
			break
		}
	}
	if len(errs) == 0 {
		return nil
	}
	p := web.NewProblem(http.StatusBadRequest, CodeInvalidRequest, "the blocks are invalid; nothing was changed")
	p.Errors = errs
	return p
}

// ReplaceBlocks replaces the resource's blocks overlapping [req.From,
// req.To) with req.Blocks and returns the confirmed bookings they lie
// over. Safe to repeat: the same set twice is the same state.
func (c *Client) ReplaceBlocks(ctx context.Context, resource string, req BlocksRequest) (BlocksResult, error) {
	var res BlocksResult
	if req.Blocks == nil {
		req.Blocks = []Block{}
	}
	err := c.do(ctx, "put blocks", http.MethodPut, "/v1/resources/"+url.PathEscape(resource)+"/blocks", "", req, &res)
	return res, err
}
