package tenants_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/tenants"
)

// twoShops is a German and an English tenant, each with its own numbers,
// token, catalogue and deposit.
const twoShops = `tenants:
  - id: nord
    name: Werkstatt Nord
    api_token_sha256: [{{nordDigest}}]
    twilio_numbers: ["+4940111111", "whatsapp:+4940222222"]
    timezone: Europe/Berlin
    language: de
    resources:
      - {id: lift-1, name: Lift 1, kind: bay, hours: {mon-fri: 07:00-16:00, sat: 08:00-12:00}, closed_days: [2026-12-24, 2026-12-25]}
      - {id: meister, name: Meister, kind: technician, hours: {mon-fri: 08:00-16:00}}
    services:
      - id: hu
        name: Hauptuntersuchung
        duration: 60m
        resources: [lift-1, meister]
        deposit: {amount: 1500, currency: eur}
        synonyms: {de: [Hauptuntersuchung, TÜV, HU], en: [MOT]}
    policies: {hold_ttl: 15m, dedup_window: 5m, cancellation_window: 24h, reminders: [2h, 24h], quiet_hours: 21:00-08:00, opt_out_keywords: [STOP, halt]}
    templates:
      de: {confirmation: "Gebucht: {{.Service}} am {{.When}} ({{.Booking}})."}
  - id: london
    name: London Tyres
    api_token_sha256: [{{londonDigest}}]
    twilio_numbers: ["+442071234567"]
    timezone: Europe/London
    language: en
    resources:
      - {id: bay-a, name: Bay A, kind: bay, hours: {mon-sun: 09:00-18:00}}
    services:
      - id: tyres
        name: Tyre fitting
        duration: 40m
        resources: [bay-a]
        deposit: {amount: 2500, currency: gbp}
        synonyms: {en: [tyre fitting, tyres, new tyres]}
`

func shopsFile(t *testing.T, edit func(string) string) tenants.File {
	t.Helper()
	text := strings.NewReplacer("{{nordDigest}}", tenants.TokenDigest("bkapi_NORDGARAGEEXAMPLETOKEN2222JE2AIBI"), "{{londonDigest}}", tenants.TokenDigest("bkapi_LONDONGARAGETESTTOKEN22222T5EVU4A")).Replace(twoShops)
	if edit != nil {
		text = edit(text)
	}
	f, err := tenants.Parse("tenants.yaml", []byte(text))
	require.NoError(t, err)
	return f
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// The test database arrives with the demo tenant (testsupport applies the
// demo file); applying it again finds nothing to change and writes nothing.
func TestApplyDemoAgainIsANoOp(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	var before time.Time
	require.NoError(t, pool.QueryRow(ctx, `SELECT updated_at FROM tenants WHERE id = 'demo'`).Scan(&before))
	require.Equal(t, 3, count(t, pool, `SELECT count(*) FROM calendar_resources WHERE tenant_id = 'demo'`))
	require.Equal(t, 3, count(t, pool, `SELECT count(*) FROM calendar_services WHERE tenant_id = 'demo' AND deposit_amount = 2000 AND deposit_currency = 'eur'`))
	require.Equal(t, 9, count(t, pool, `SELECT count(*) FROM calendar_service_resources WHERE tenant_id = 'demo'`))

	diff, err := deploy.ApplyDemoTenants(ctx, pool, tenants.ApplyOptions{})
	require.NoError(t, err)
	require.True(t, diff.Empty(), diff.String())
	var after time.Time
	require.NoError(t, pool.QueryRow(ctx, `SELECT updated_at FROM tenants WHERE id = 'demo'`).Scan(&after))
	require.Equal(t, before, after, "nothing was written")
}

func TestApplyTwoTenantsThenAgain(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	f := shopsFile(t, nil)

	diff, err := tenants.Apply(ctx, pool, f, tenants.ApplyOptions{})
	require.NoError(t, err)
	text := diff.String()
	for _, want := range []string{"+ tenant nord", "+ tenant london", "- tenant demo", "+ number nord/+4940222222",
		"+ resource nord/lift-1", "+ service london/tyres", "+ template nord/de/confirmation", "~ policies nord: hold_ttl unset -> 15m0s", "opt_out_keywords [] -> [STOP HALT]",
		"note: resource nord/lift-1 has different hours per weekday"} {
		require.Contains(t, text, want)
	}
	require.Equal(t, 2, count(t, pool, `SELECT count(*) FROM tenants`))
	require.Equal(t, 3, count(t, pool, `SELECT count(*) FROM tenant_numbers`))
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM tenant_numbers WHERE tenant_id = 'london' AND number = '+442071234567'`))
	require.Equal(t, 0, count(t, pool, `SELECT count(*) FROM calendar_resources WHERE tenant_id = 'demo'`), "the demo tenant had no bookings: removed")
	// The calendar's own columns carry the hours all open days share.
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM calendar_resources WHERE tenant_id = 'nord' AND id = 'lift-1'
		AND opens_at = '08:00' AND closes_at = '12:00' AND weekdays = '{1,2,3,4,5,6}' AND closed_days = '{2026-12-24,2026-12-25}'`))

	again, err := tenants.Apply(ctx, pool, shopsFile(t, nil), tenants.ApplyOptions{})
	require.NoError(t, err)
	require.True(t, again.Empty(), again.String())

	dry, err := tenants.Apply(ctx, pool, shopsFile(t, func(s string) string { return strings.Replace(s, "amount: 2500", "amount: 3000", 1) }),
		tenants.ApplyOptions{DryRun: true})
	require.NoError(t, err)
	require.Equal(t, "~ service london/tyres: deposit 2500 gbp -> 3000 gbp\n", dry.String())
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM calendar_services WHERE tenant_id = 'london' AND deposit_amount = 2500`), "a dry run writes nothing")
}

// A number moves from one tenant to another in one apply: removals run
// before additions, and the database's unique number still holds.
func TestApplyMovesANumberBetweenTenants(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	_, err := tenants.Apply(ctx, pool, shopsFile(t, nil), tenants.ApplyOptions{})
	require.NoError(t, err)
	moved := shopsFile(t, func(s string) string {
		s = strings.Replace(s, `["+4940111111", "whatsapp:+4940222222"]`, `["+4940111111"]`, 1)
		return strings.Replace(s, `["+442071234567"]`, `["+442071234567", "+4940222222"]`, 1)
	})
	diff, err := tenants.Apply(ctx, pool, moved, tenants.ApplyOptions{})
	require.NoError(t, err)
	require.Contains(t, diff.String(), "- number nord/+4940222222")
	require.Contains(t, diff.String(), "+ number london/+4940222222")
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM tenant_numbers WHERE number = '+4940222222' AND tenant_id = 'london'`))
}

// A database migrated before tenants existed has the demo rows of the old
// migration 00002 and no tenant row; applying the demo file adopts them.
func TestApplyDemoAdoptsTheRowsOfTheOldSeed(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	for _, sql := range []string{
		`DELETE FROM tenants`, `DELETE FROM calendar_service_resources`,
		`UPDATE calendar_resources SET weekly_hours = NULL`,
		`UPDATE calendar_services SET synonyms = '{}', deposit_amount = NULL, deposit_currency = NULL, ordinal = 0`,
	} {
		_, err := pool.Exec(ctx, sql)
		require.NoError(t, err)
	}
	diff, err := deploy.ApplyDemoTenants(ctx, pool, tenants.ApplyOptions{})
	require.NoError(t, err)
	text := diff.String()
	// Rows of a tenant without a tenant row are not configuration yet: the
	// diff shows them added, and the apply writes over them in place.
	require.Contains(t, text, "+ tenant demo")
	require.Contains(t, text, "+ resource demo/bay-1")
	require.Contains(t, text, "+ service demo/tire-change")
	require.Equal(t, 3, count(t, pool, `SELECT count(*) FROM calendar_resources WHERE tenant_id = 'demo' AND weekly_hours IS NOT NULL`))
	require.Equal(t, 3, count(t, pool, `SELECT count(*) FROM calendar_services WHERE tenant_id = 'demo' AND deposit_amount = 2000`))
	again, err := deploy.ApplyDemoTenants(ctx, pool, tenants.ApplyOptions{})
	require.NoError(t, err)
	require.True(t, again.Empty(), again.String())
}
