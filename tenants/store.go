package tenants

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// querier is what loading needs of a pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// policiesJSON is the stored form of Policies: durations as Go duration
// strings, so the column reads well in psql.
type policiesJSON struct {
	HoldTTL            string   `json:"hold_ttl,omitempty"`
	DedupWindow        string   `json:"dedup_window,omitempty"`
	CancellationWindow string   `json:"cancellation_window,omitempty"`
	Reminders          []string `json:"reminders,omitempty"`
	QuietHours         string   `json:"quiet_hours,omitempty"`
	OptOutKeywords     []string `json:"opt_out_keywords,omitempty"`
	OptInKeywords      []string `json:"opt_in_keywords,omitempty"`
	CallerLinks        string   `json:"caller_links,omitempty"`
}

func encodePolicies(p Policies) policiesJSON {
	str := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return d.String()
	}
	out := policiesJSON{HoldTTL: str(p.HoldTTL), DedupWindow: str(p.DedupWindow), CancellationWindow: str(p.CancellationWindow),
		OptOutKeywords: p.OptOutKeywords, OptInKeywords: p.OptInKeywords, CallerLinks: p.CallerLinks}
	for _, r := range p.Reminders {
		out.Reminders = append(out.Reminders, r.String())
	}
	if p.QuietHours != nil {
		out.QuietHours = p.QuietHours.Opens + "-" + p.QuietHours.Closes
	}
	return out
}

func decodePolicies(raw []byte) (Policies, error) {
	var j policiesJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return Policies{}, err
	}
	var p Policies
	var errs []string
	dur := func(s string) time.Duration {
		if s == "" {
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			errs = append(errs, err.Error())
		}
		return d
	}
	p.HoldTTL, p.DedupWindow, p.CancellationWindow = dur(j.HoldTTL), dur(j.DedupWindow), dur(j.CancellationWindow)
	for _, r := range j.Reminders {
		p.Reminders = append(p.Reminders, dur(r))
	}
	if j.QuietHours != "" {
		iv, _ := parseInterval(j.QuietHours)
		p.QuietHours = &iv
	}
	p.OptOutKeywords, p.OptInKeywords, p.CallerLinks = j.OptOutKeywords, j.OptInKeywords, j.CallerLinks
	if len(errs) > 0 {
		return Policies{}, fmt.Errorf("stored policies: %s", strings.Join(errs, "; "))
	}
	return p, nil
}

// loadState reads every configured tenant (a row in tenants) with its
// tokens, numbers, resources and services, in the normal form of a parsed
// file. Calendar rows of tenant IDs without a tenants row (written by
// hand, or before this configuration existed) are not configuration and
// are left alone.
func loadState(ctx context.Context, q querier) (File, error) {
	tenants, err := loadTenantRows(ctx, q)
	if err != nil {
		return File{}, err
	}
	f := File{Tenants: tenants}
	byID := map[string]*Tenant{}
	for i := range f.Tenants {
		byID[f.Tenants[i].ID] = &f.Tenants[i]
	}
	for _, step := range []func(context.Context, querier, map[string]*Tenant) error{loadTokens, loadNumbers, loadResources, loadServices} {
		if err := step(ctx, q, byID); err != nil {
			return File{}, err
		}
	}
	return normalise(f), nil
}

func loadTenantRows(ctx context.Context, q querier) ([]Tenant, error) {
	rows, err := q.Query(ctx, `SELECT id, name, timezone, language, policies, templates, whatsapp_templates, senders FROM tenants ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("load tenants: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Tenant, error) {
		var t Tenant
		var policies, templates, whatsApp, senders []byte
		if err := r.Scan(&t.ID, &t.Name, &t.Timezone, &t.Language, &policies, &templates, &whatsApp, &senders); err != nil {
			return t, err
		}
		p, err := decodePolicies(policies)
		if err != nil {
			return t, fmt.Errorf("tenant %s: %w", t.ID, err)
		}
		t.Policies = p
		if err := json.Unmarshal(senders, &t.Senders); err != nil {
			return t, fmt.Errorf("tenant %s: senders: %w", t.ID, err)
		}
		if err := json.Unmarshal(whatsApp, &t.WhatsApp); err != nil {
			return t, fmt.Errorf("tenant %s: whatsapp templates: %w", t.ID, err)
		}
		return t, json.Unmarshal(templates, &t.Templates)
	})
	if err != nil {
		return nil, fmt.Errorf("load tenants: %w", err)
	}
	return out, nil
}

// eachPair runs fn for every (tenant, value) row of sql whose tenant is
// configured.
func eachPair(ctx context.Context, q querier, sql string, byID map[string]*Tenant, fn func(*Tenant, string)) error {
	rows, err := q.Query(ctx, sql)
	if err != nil {
		return err
	}
	var tenant, value string
	_, err = pgx.ForEachRow(rows, []any{&tenant, &value}, func() error {
		if t := byID[tenant]; t != nil {
			fn(t, value)
		}
		return nil
	})
	return err
}

func loadTokens(ctx context.Context, q querier, byID map[string]*Tenant) error {
	err := eachPair(ctx, q, `SELECT tenant_id, token_sha256 FROM tenant_api_tokens`, byID,
		func(t *Tenant, v string) { t.TokenHashes = append(t.TokenHashes, v) })
	if err != nil {
		return fmt.Errorf("load token digests: %w", err)
	}
	return nil
}

func loadNumbers(ctx context.Context, q querier, byID map[string]*Tenant) error {
	err := eachPair(ctx, q, `SELECT tenant_id, number FROM tenant_numbers`, byID,
		func(t *Tenant, v string) { t.Numbers = append(t.Numbers, v) })
	if err != nil {
		return fmt.Errorf("load numbers: %w", err)
	}
	return nil
}

func loadResources(ctx context.Context, q querier, byID map[string]*Tenant) error {
	rows, err := q.Query(ctx, `SELECT tenant_id, id, name, kind, to_char(opens_at, 'HH24:MI'), to_char(closes_at, 'HH24:MI'),
		weekdays, weekly_hours, ARRAY(SELECT to_char(d, 'YYYY-MM-DD') FROM unnest(closed_days) d ORDER BY d), shop_calendar
		FROM calendar_resources WHERE retired_at IS NULL ORDER BY tenant_id, id`)
	if err != nil {
		return fmt.Errorf("load resources: %w", err)
	}
	var tenant, opens, closes string
	var res Resource
	var weekdays []int16
	var weekly []byte
	var shopCal *ShopCalendar
	_, err = pgx.ForEachRow(rows, []any{&tenant, &res.ID, &res.Name, &res.Kind, &opens, &closes, &weekdays, &weekly, &res.ClosedDays, &shopCal}, func() error {
		t := byID[tenant]
		if t == nil {
			return nil
		}
		r := res
		r.ClosedDays = slices.Clone(res.ClosedDays)
		r.Calendar, shopCal = shopCal, nil
		r.Hours = map[int]Interval{}
		if weekly == nil {
			for _, d := range weekdays {
				r.Hours[int(d)] = Interval{Opens: opens, Closes: closes}
			}
		} else if err := decodeHours(weekly, r.Hours); err != nil {
			return fmt.Errorf("resource %s/%s: %w", tenant, r.ID, err)
		}
		t.Resources = append(t.Resources, r)
		return nil
	})
	if err != nil {
		return fmt.Errorf("load resources: %w", err)
	}
	return nil
}

func encodeHours(h map[int]Interval) map[string][2]string {
	out := map[string][2]string{}
	for d, iv := range h {
		out[strconv.Itoa(d)] = [2]string{iv.Opens, iv.Closes}
	}
	return out
}

func decodeHours(raw []byte, into map[int]Interval) error {
	var m map[string][2]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	for k, v := range m {
		d, err := strconv.Atoi(k)
		if err != nil || d < 1 || d > 7 {
			return fmt.Errorf("weekly_hours: bad weekday %q", k)
		}
		into[d] = Interval{Opens: v[0], Closes: v[1]}
	}
	return nil
}
