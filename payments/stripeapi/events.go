package stripeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stripe/stripe-go/v84"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/payments"
)

// Event types the API records, Stripe's names.
const (
	EventCheckoutCompleted       = "checkout.session.completed"
	EventCheckoutExpired         = "checkout.session.expired"
	EventAmountCapturableUpdated = "payment_intent.amount_capturable_updated"
	EventIntentSucceeded         = "payment_intent.succeeded"
	EventIntentCanceled          = "payment_intent.canceled"
	EventIntentPaymentFailed     = "payment_intent.payment_failed"
	EventChargeRefunded          = "charge.refunded"
)

// eventTypes are the types a webhook endpoint may enable ("*": all).
var eventTypes = []string{EventCheckoutCompleted, EventCheckoutExpired, EventAmountCapturableUpdated,
	EventIntentSucceeded, EventIntentCanceled, EventIntentPaymentFailed, EventChargeRefunded, EventEndpointDisabled}

// eventSource is what caused an event: an API request (its Request-Id and
// Idempotency-Key, as Stripe reports them) or nothing (the hosted page's
// customer, the expiry sweep).
type eventSource struct{ requestID, idempotencyKey string }

type requestIDKey struct{}

// sourceOf is the event source of an API request.
func sourceOf(r *http.Request) eventSource {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return eventSource{requestID: id, idempotencyKey: r.Header.Get(idempotency.HeaderKey)}
}

// recordEvent inserts an event and, in the same statement's transaction,
// one pending delivery per enabled webhook endpoint of the tenant that
// enabled its type: the outbox that the Deliverer drains. A disabled
// endpoint gets nothing, as at Stripe. The caller's transaction
// also holds the state change the event reports, so both commit or
// neither does.
func recordEvent(ctx context.Context, q querier, tenant, typ, objectID string, object any, src eventSource, at time.Time) error {
	body, err := json.Marshal(object)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", typ, err)
	}
	id := newID("evt_")
	if _, err := q.Exec(ctx, `INSERT INTO events (id, tenant_id, type, object_id, object, request_id, idempotency_key, created_at)
		VALUES ($1, $2, $3, $4, $5, nullif($6, ''), nullif($7, ''), $8)`,
		id, tenant, typ, objectID, body, src.requestID, src.idempotencyKey, at); err != nil {
		return fmt.Errorf("insert %s event: %w", typ, err)
	}
	if _, err := q.Exec(ctx, `INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
		SELECT id, $1, $2 FROM webhook_endpoints
		WHERE tenant_id = $3 AND status = 'enabled' AND ('*' = ANY (enabled_events) OR $4 = ANY (enabled_events))`, id, at, tenant, typ); err != nil {
		return fmt.Errorf("queue %s event: %w", typ, err)
	}
	return nil
}

// emit records an event caused by the API request r.
func (s *Server) emit(r *http.Request, tx pgx.Tx, typ, objectID string, object any) error {
	return recordEvent(r.Context(), tx, tenantOf(r), typ, objectID, object, sourceOf(r), s.now())
}

// eventObject is an Event on the wire. api_version is stripe-go's pinned
// version: webhook.ConstructEvent refuses events of another one, and the
// objects are rendered in the shape that version decodes.
type eventObject struct {
	ID              string       `json:"id"`
	Object          string       `json:"object"`
	APIVersion      string       `json:"api_version"`
	Created         int64        `json:"created"`
	Data            eventData    `json:"data"`
	Livemode        bool         `json:"livemode"`
	PendingWebhooks int64        `json:"pending_webhooks"`
	Request         eventRequest `json:"request"`
	Type            string       `json:"type"`
}

type eventData struct {
	Object json.RawMessage `json:"object"`
}

type eventRequest struct {
	ID             *string `json:"id"`
	IdempotencyKey *string `json:"idempotency_key"`
}

// eventColumns reads an event with its undelivered webhook count.
const eventColumns = `seq, id, type, object, coalesce(request_id, ''), coalesce(idempotency_key, ''), created_at,
	(SELECT count(*) FROM webhook_deliveries d WHERE d.event_id = events.id AND d.delivered_at IS NULL)`

func scanEvent(row pgx.Row) (int64, *eventObject, error) {
	var (
		seq        int64
		e          = &eventObject{Object: "event", APIVersion: stripe.APIVersion}
		obj        []byte
		reqID, key string
		created    time.Time
	)
	err := row.Scan(&seq, &e.ID, &e.Type, &obj, &reqID, &key, &created, &e.PendingWebhooks)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, errNotFound
	} else if err != nil {
		return 0, nil, err
	}
	e.Data.Object, e.Created = obj, created.Unix()
	e.Request = eventRequest{ID: nullable(reqID), IdempotencyKey: nullable(key)}
	return seq, e, nil
}

func getEvent(ctx context.Context, q querier, tenant, id string) (*eventObject, error) {
	_, e, err := scanEvent(q.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE tenant_id = $1 AND id = $2`, tenant, id))
	return e, err
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if _, apiErr := readQuery(r, formSpec{}); apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	e, err := getEvent(ctx, s.Pool, tenantOf(r), r.PathValue("id"))
	if errors.Is(err, errNotFound) {
		writeError(ctx, w, &apiError{status: http.StatusNotFound, Type: typeInvalidRequest, Code: payments.CodeResourceMissing,
			Param: "id", Message: "No such event: '" + r.PathValue("id") + "'"})
		return
	} else if err != nil {
		s.internalError(w, r, "read event", err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

var listEventsSpec = formSpec{scalars: []string{"limit", "starting_after", "type"}, maps: []string{"created"}}

// eventPage is Stripe's list envelope of events.
type eventPage struct {
	Object  string         `json:"object"`
	Data    []*eventObject `json:"data"`
	HasMore bool           `json:"has_more"`
	URL     string         `json:"url"`
}

// listEvents is GET /v1/events: newest first, filtered by type and by
// created[gt|gte|lt|lte] (unix seconds), paged by starting_after.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, apiErr := readQuery(r, listEventsSpec)
	if apiErr == nil {
		var limit int
		if limit, _, apiErr = pageParams(f); apiErr == nil {
			var sql string
			var args []any
			if sql, args, apiErr = s.eventQuery(r, f, limit); apiErr == nil {
				s.answerEvents(w, r, sql, args, limit)
				return
			}
		}
	}
	writeError(ctx, w, apiErr)
}

// eventQuery builds the list query; values are always bind parameters.
func (s *Server) eventQuery(r *http.Request, f form, limit int) (string, []any, *apiError) {
	tenant := tenantOf(r)
	sql := `SELECT ` + eventColumns + ` FROM events WHERE tenant_id = $1`
	args := []any{tenant}
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	if typ, ok := f.str("type"); ok {
		sql += ` AND type = ` + arg(typ)
	}
	ops := map[string]string{"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
	for op, v := range f.maps["created"] {
		cmp, known := ops[op]
		n, err := strconv.ParseInt(v, 10, 64)
		if !known || err != nil {
			return "", nil, invalidRequest("created["+op+"]", "", "created takes gt, gte, lt or lte with a unix timestamp")
		}
		sql += ` AND date_trunc('second', created_at) ` + cmp + ` to_timestamp(` + arg(n) + `)`
	}
	if after, ok := f.str("starting_after"); ok {
		var seq int64
		if err := s.Pool.QueryRow(r.Context(), `SELECT seq FROM events WHERE tenant_id = $1 AND id = $2`, tenant, after).Scan(&seq); err != nil {
			return "", nil, invalidRequest("starting_after", payments.CodeResourceMissing, "No such event: '"+after+"'")
		}
		sql += ` AND seq < ` + arg(seq)
	}
	sql += ` ORDER BY seq DESC LIMIT ` + arg(limit+1)
	return sql, args, nil
}

func (s *Server) answerEvents(w http.ResponseWriter, r *http.Request, sql string, args []any, limit int) {
	rows, err := s.Pool.Query(r.Context(), sql, args...)
	if err != nil {
		s.internalError(w, r, "list events", err)
		return
	}
	page := eventPage{Object: "list", URL: "/v1/events", Data: []*eventObject{}}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*eventObject, error) {
		_, e, err := scanEvent(row)
		return e, err
	})
	if err != nil {
		s.internalError(w, r, "list events", err)
		return
	}
	if len(events) > limit {
		events, page.HasMore = events[:limit], true
	}
	page.Data = append(page.Data, events...)
	writeJSON(w, http.StatusOK, page)
}
