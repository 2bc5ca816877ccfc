package stripeapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/payments"
)

// webhookColumns reads a WebhookEndpoint (scanWebhook).
const webhookColumns = `id, url, enabled_events, coalesce(description, ''), created_at, status`

func scanWebhook(row pgx.Row) (*webhookObject, error) {
	o := &webhookObject{Object: "webhook_endpoint", Metadata: map[string]string{}}
	var (
		desc    string
		created time.Time
	)
	err := row.Scan(&o.ID, &o.URL, &o.EnabledEvents, &desc, &created, &o.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNotFound
	} else if err != nil {
		return nil, err
	}
	o.Description, o.Created = nullable(desc), created.Unix()
	return o, nil
}

// getWebhook reads a tenant's own endpoint; the operator's configured
// endpoints are not the tenant's to read or change (errNotFound).
func getWebhook(ctx context.Context, q querier, tenant, id string, forUpdate bool) (*webhookObject, error) {
	if strings.HasPrefix(id, configEndpointPrefix) {
		return nil, errNotFound
	}
	sql := `SELECT ` + webhookColumns + ` FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2`
	if forUpdate {
		sql += ` FOR UPDATE`
	}
	return scanWebhook(q.QueryRow(ctx, sql, tenant, id))
}

func noSuchWebhook(id string) *apiError {
	return &apiError{status: http.StatusNotFound, Type: typeInvalidRequest, Code: payments.CodeResourceMissing,
		Param: "id", Message: "No such webhook endpoint: '" + id + "'"}
}

// getWebhookEndpoint is GET /v1/webhook_endpoints/{id}: the endpoint with
// its status (enabled, or disabled by the tenant or for failing), without
// its secret.
func (s *Server) getWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if _, apiErr := readQuery(r, formSpec{}); apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	o, err := getWebhook(ctx, s.Pool, tenantOf(r), r.PathValue("id"), false)
	if errors.Is(err, errNotFound) {
		writeError(ctx, w, noSuchWebhook(r.PathValue("id")))
		return
	} else if err != nil {
		s.internalError(w, r, "read webhook endpoint", err)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

var updateWebhookSpec = formSpec{scalars: []string{"disabled"}}

// updateWebhookEndpoint is POST /v1/webhook_endpoints/{id}: disabled=true
// disables the endpoint (its undelivered events are held), disabled=false
// enables it again, with a fresh count of failures, and its held events
// are retried at once. Stripe's other parameters (url, enabled_events,
// description, metadata) are refused as unknown: not implemented.
func (s *Server) updateWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, ok := s.txOf(w, r)
	if !ok {
		return
	}
	f, apiErr := readForm(r, updateWebhookSpec)
	var disable, sent bool
	if apiErr == nil {
		disable, sent, apiErr = f.boolean("disabled")
	}
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	tenant, id := tenantOf(r), r.PathValue("id")
	o, err := getWebhook(ctx, tx, tenant, id, true)
	if errors.Is(err, errNotFound) {
		writeError(ctx, w, noSuchWebhook(id))
		return
	}
	if err == nil && sent {
		err = s.setDisabled(ctx, tx, tenant, id, disable)
	}
	if err == nil {
		o, err = getWebhook(ctx, tx, tenant, id, false)
	}
	if err != nil {
		s.internalError(w, r, "update webhook endpoint", err)
		return
	}
	idempotency.SetResource(ctx, "webhook_endpoint", o.ID)
	writeJSON(w, http.StatusOK, o)
}

// setDisabled disables or enables an endpoint at the tenant's request;
// either is a no-op when the endpoint is so already.
func (s *Server) setDisabled(ctx context.Context, tx pgx.Tx, tenant, id string, disable bool) error {
	if disable {
		_, err := disableEndpoint(ctx, tx, tenant, id, disabledByUser, s.now())
		return err
	}
	resumed, err := enableEndpoint(ctx, tx, tenant, id, s.now())
	if err == nil && resumed > 0 {
		s.log().InfoContext(ctx, "payments: webhook endpoint enabled again; its held events are due", "tenant", tenant,
			"endpoint", id, "resumed_events", resumed)
	}
	return err
}
