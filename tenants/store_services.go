package tenants

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

func loadServices(ctx context.Context, q querier, byID map[string]*Tenant) error {
	links, err := loadLinks(ctx, q)
	if err != nil {
		return err
	}
	rows, err := q.Query(ctx, `SELECT tenant_id, id, name, duration_minutes, synonyms, coalesce(deposit_amount, 0), coalesce(deposit_currency, '')
		FROM calendar_services WHERE retired_at IS NULL ORDER BY tenant_id, ordinal, id`)
	if err != nil {
		return fmt.Errorf("load services: %w", err)
	}
	var tenant string
	var s Service
	var minutes int
	var synonyms []byte
	_, err = pgx.ForEachRow(rows, []any{&tenant, &s.ID, &s.Name, &minutes, &synonyms, &s.Deposit.Amount, &s.Deposit.Currency}, func() error {
		t := byID[tenant]
		if t == nil {
			return nil
		}
		svc := s
		svc.Duration = time.Duration(minutes) * time.Minute
		svc.Synonyms = nil
		if err := json.Unmarshal(synonyms, &svc.Synonyms); err != nil {
			return fmt.Errorf("service %s/%s synonyms: %w", tenant, svc.ID, err)
		}
		svc.Resources = links[tenant+"/"+svc.ID]
		t.Services = append(t.Services, svc)
		return nil
	})
	if err != nil {
		return fmt.Errorf("load services: %w", err)
	}
	return nil
}

// loadLinks returns the resources of each service, keyed "tenant/service".
func loadLinks(ctx context.Context, q querier) (map[string][]string, error) {
	rows, err := q.Query(ctx, `SELECT tenant_id || '/' || service_id, resource_id FROM calendar_service_resources ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("load service resources: %w", err)
	}
	out := map[string][]string{}
	var key, resource string
	_, err = pgx.ForEachRow(rows, []any{&key, &resource}, func() error {
		out[key] = append(out[key], resource)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load service resources: %w", err)
	}
	return out, nil
}
