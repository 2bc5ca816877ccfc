package tenants

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// write carries out the plan: removals first (so a number or token may move
// from one tenant to another in one apply), then the tenant rows, their
// resources, services and links, tokens and numbers.
func (p *plan) write(ctx context.Context, tx pgx.Tx, now time.Time) error {
	steps := []struct {
		what string
		run  func(context.Context, pgx.Tx, time.Time) error
	}{
		{"remove tokens and numbers", p.removeAccess},
		{"remove services", p.removeServiceRows},
		{"remove resources", p.removeResourceRows},
		{"remove tenants", p.removeTenantRows},
		{"write tenants", p.writeTenants},
		{"write resources", p.writeResources},
		{"write services", p.writeServices},
		{"add tokens and numbers", p.addAccess},
		{"touch tenants", p.touchTenants},
	}
	for _, s := range steps {
		if err := s.run(ctx, tx, now); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return nil
}

func (p *plan) removeAccess(ctx context.Context, tx pgx.Tx, _ time.Time) error {
	for _, t := range p.removeTokens {
		if _, err := tx.Exec(ctx, `DELETE FROM tenant_api_tokens WHERE tenant_id = $1 AND token_sha256 = $2`, t.tenant, t.id); err != nil {
			return err
		}
	}
	for _, n := range p.removeNumbers {
		if _, err := tx.Exec(ctx, `DELETE FROM tenant_numbers WHERE tenant_id = $1 AND number = $2`, n.tenant, n.id); err != nil {
			return err
		}
	}
	return nil
}

// removeServiceRows deletes services no reservation refers to and retires
// the others: reservations keep their foreign key, the calendar offers
// them no more.
func (p *plan) removeServiceRows(ctx context.Context, tx pgx.Tx, now time.Time) error {
	for _, s := range p.removeServices {
		if _, err := tx.Exec(ctx, `DELETE FROM calendar_service_resources WHERE tenant_id = $1 AND service_id = $2`, s.tenant, s.id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE calendar_services SET retired_at = $3 WHERE tenant_id = $1 AND id = $2`, s.tenant, s.id, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM calendar_services c WHERE tenant_id = $1 AND id = $2
			AND NOT EXISTS (SELECT 1 FROM calendar_reservations r WHERE r.tenant_id = c.tenant_id AND r.service = c.id)`, s.tenant, s.id); err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) removeResourceRows(ctx context.Context, tx pgx.Tx, now time.Time) error {
	for _, r := range p.removeResources {
		if _, err := tx.Exec(ctx, `DELETE FROM calendar_service_resources WHERE tenant_id = $1 AND resource_id = $2`, r.tenant, r.id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM calendar_blocks WHERE tenant_id = $1 AND resource_id = $2`, r.tenant, r.id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE calendar_resources SET retired_at = $3 WHERE tenant_id = $1 AND id = $2`, r.tenant, r.id, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM calendar_resources c WHERE tenant_id = $1 AND id = $2
			AND NOT EXISTS (SELECT 1 FROM calendar_reservations r WHERE r.tenant_id = c.tenant_id AND r.resource_id = c.id)`, r.tenant, r.id); err != nil {
			return err
		}
	}
	return nil
}

// removeTenantRows deletes the tenant rows; tokens and numbers go with
// them (ON DELETE CASCADE), resources and services went before.
func (p *plan) removeTenantRows(ctx context.Context, tx pgx.Tx, _ time.Time) error {
	if len(p.removeTenants) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `DELETE FROM tenants WHERE id = ANY($1)`, p.removeTenants)
	return err
}

func (p *plan) writeTenants(ctx context.Context, tx pgx.Tx, now time.Time) error {
	for _, t := range p.upsertTenants {
		templates := t.Templates
		if templates == nil {
			templates = map[Language]map[TemplateName]string{}
		}
		whatsApp := t.WhatsApp
		if whatsApp == nil {
			whatsApp = map[Language]map[TemplateName]WhatsAppTemplate{}
		}
		_, err := tx.Exec(ctx, `INSERT INTO tenants (id, name, timezone, language, policies, templates, whatsapp_templates, senders, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, timezone = EXCLUDED.timezone, language = EXCLUDED.language,
				policies = EXCLUDED.policies, templates = EXCLUDED.templates, whatsapp_templates = EXCLUDED.whatsapp_templates,
				senders = EXCLUDED.senders, updated_at = EXCLUDED.updated_at`,
			t.ID, t.Name, t.Timezone, string(t.Language), encodePolicies(t.Policies), templates, whatsApp, t.Senders, now)
		if err != nil {
			return fmt.Errorf("tenant %s: %w", t.ID, err)
		}
	}
	return nil
}

func (p *plan) writeResources(ctx context.Context, tx pgx.Tx, _ time.Time) error {
	for _, t := range p.upsertResources {
		for _, r := range t.Resources {
			common := commonHours(r.Hours)
			days := sortedKeysInt(r.Hours)
			closed := r.ClosedDays
			if closed == nil {
				closed = []string{}
			}
			// Blocks mirrored from a calendar the resource no longer
			// reads would block for ever: they go with the old calendar.
			if _, err := tx.Exec(ctx, `DELETE FROM calendar_blocks b USING calendar_resources c
				WHERE c.tenant_id = $1 AND c.id = $2 AND b.tenant_id = c.tenant_id AND b.resource_id = c.id
				  AND c.shop_calendar IS DISTINCT FROM $3::jsonb`, t.ID, r.ID, r.Calendar); err != nil {
				return fmt.Errorf("resource %s/%s: %w", t.ID, r.ID, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO calendar_resources (tenant_id, id, name, kind, opens_at, closes_at, weekdays, weekly_hours, closed_days, shop_calendar)
				VALUES ($1, $2, $3, $4, $5::text::time, $6::text::time, $7, $8, $9::text[]::date[], $10)
				ON CONFLICT (tenant_id, id) DO UPDATE SET name = EXCLUDED.name, kind = EXCLUDED.kind, opens_at = EXCLUDED.opens_at,
					closes_at = EXCLUDED.closes_at, weekdays = EXCLUDED.weekdays, weekly_hours = EXCLUDED.weekly_hours,
					closed_days = EXCLUDED.closed_days, shop_calendar = EXCLUDED.shop_calendar, retired_at = NULL`,
				t.ID, r.ID, r.Name, r.Kind, common.Opens, common.Closes, days, encodeHours(r.Hours), closed, r.Calendar)
			if err != nil {
				return fmt.Errorf("resource %s/%s: %w", t.ID, r.ID, err)
			}
		}
	}
	return nil
}

func (p *plan) writeServices(ctx context.Context, tx pgx.Tx, _ time.Time) error {
	for _, t := range p.upsertServices {
		for _, s := range t.Services {
			synonyms := s.Synonyms
			if synonyms == nil {
				synonyms = map[Language][]string{}
			}
			_, err := tx.Exec(ctx, `INSERT INTO calendar_services (tenant_id, id, name, duration_minutes, synonyms, deposit_amount, deposit_currency, ordinal)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
				ON CONFLICT (tenant_id, id) DO UPDATE SET name = EXCLUDED.name, duration_minutes = EXCLUDED.duration_minutes,
					synonyms = EXCLUDED.synonyms, deposit_amount = EXCLUDED.deposit_amount, deposit_currency = EXCLUDED.deposit_currency,
					ordinal = EXCLUDED.ordinal, retired_at = NULL`,
				t.ID, s.ID, s.Name, int(s.Duration/time.Minute), synonyms, s.Deposit.Amount, s.Deposit.Currency, p.serviceOrdinals[ref{t.ID, s.ID}])
			if err != nil {
				return fmt.Errorf("service %s/%s: %w", t.ID, s.ID, err)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM calendar_service_resources WHERE tenant_id = $1 AND service_id = $2`, t.ID, s.ID); err != nil {
				return fmt.Errorf("service %s/%s: %w", t.ID, s.ID, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO calendar_service_resources (tenant_id, service_id, resource_id)
				SELECT $1, $2, unnest($3::text[])`, t.ID, s.ID, s.Resources); err != nil {
				return fmt.Errorf("service %s/%s resources: %w", t.ID, s.ID, err)
			}
		}
	}
	return nil
}

func (p *plan) addAccess(ctx context.Context, tx pgx.Tx, _ time.Time) error {
	for _, t := range p.addTokens {
		if _, err := tx.Exec(ctx, `INSERT INTO tenant_api_tokens (token_sha256, tenant_id) VALUES ($1, $2)`, t.id, t.tenant); err != nil {
			return fmt.Errorf("token of %s: %w", t.tenant, err)
		}
	}
	for _, n := range p.addNumbers {
		if _, err := tx.Exec(ctx, `INSERT INTO tenant_numbers (number, tenant_id) VALUES ($1, $2)`, n.id, n.tenant); err != nil {
			return fmt.Errorf("number of %s: %w", n.tenant, err)
		}
	}
	return nil
}

// touchTenants marks every tenant whose configuration changed, so
// updated_at tells when a tenant last changed, whatever part did.
func (p *plan) touchTenants(ctx context.Context, tx pgx.Tx, now time.Time) error {
	var ids []string
	for _, c := range p.diff.Changes {
		ids = append(ids, c.Tenant)
	}
	_, err := tx.Exec(ctx, `UPDATE tenants SET updated_at = $2 WHERE id = ANY($1)`, ids, now)
	return err
}

func sortedKeysInt(m map[int]Interval) []int16 {
	var out []int16
	for d := 1; d <= 7; d++ {
		if _, ok := m[d]; ok {
			out = append(out, int16(d))
		}
	}
	return out
}
