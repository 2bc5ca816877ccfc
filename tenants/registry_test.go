package tenants_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/apitoken"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/tenants"
)

// loadShops applies the two shops to a fresh database and loads them.
func loadShops(t *testing.T) *tenants.Registry {
	t.Helper()
	ctx := context.Background()
	pool := testsupport.Database(t)
	_, err := tenants.Apply(ctx, pool, shopsFile(t, nil), tenants.ApplyOptions{})
	require.NoError(t, err)
	reg, err := tenants.LoadRegistry(ctx, pool, nil)
	require.NoError(t, err)
	return reg
}

func TestRegistryFindsEachTenantByNumberAndToken(t *testing.T) {
	reg := loadShops(t)

	lookups := []struct {
		name     string
		find     func() (*tenants.Profile, bool)
		tenant   string
		language tenants.Language
		service  string
		deposit  tenants.Money
	}{
		{"voice number", func() (*tenants.Profile, bool) { return reg.ByNumber("+4940111111") }, "nord", tenants.German, "hu", tenants.Money{Amount: 1500, Currency: "eur"}},
		{"whatsapp address", func() (*tenants.Profile, bool) { return reg.ByNumber("whatsapp:+4940222222") }, "nord", tenants.German, "hu", tenants.Money{Amount: 1500, Currency: "eur"}},
		{"whatsapp prefix on a voice number", func() (*tenants.Profile, bool) { return reg.ByNumber("whatsapp:+4940111111") }, "nord", tenants.German, "hu", tenants.Money{Amount: 1500, Currency: "eur"}},
		{"token", func() (*tenants.Profile, bool) { return reg.ByToken("bkapi_NORDGARAGEEXAMPLETOKEN2222JE2AIBI") }, "nord", tenants.German, "hu", tenants.Money{Amount: 1500, Currency: "eur"}},
		{"london number", func() (*tenants.Profile, bool) { return reg.ByNumber("+442071234567") }, "london", tenants.English, "tyres", tenants.Money{Amount: 2500, Currency: "gbp"}},
		{"london token", func() (*tenants.Profile, bool) { return reg.ByToken("bkapi_LONDONGARAGETESTTOKEN22222T5EVU4A") }, "london", tenants.English, "tyres", tenants.Money{Amount: 2500, Currency: "gbp"}},
		{"by ID", func() (*tenants.Profile, bool) { return reg.Get("london") }, "london", tenants.English, "tyres", tenants.Money{Amount: 2500, Currency: "gbp"}},
	}
	for _, l := range lookups {
		t.Run(l.name, func(t *testing.T) {
			p, ok := l.find()
			require.True(t, ok)
			require.Equal(t, l.tenant, p.ID)
			require.Equal(t, l.language, p.Language)
			d, ok := p.Deposit(l.service)
			require.True(t, ok)
			require.Equal(t, l.deposit, d)
			cat := p.Catalogue()
			require.Equal(t, l.tenant, cat.Tenant)
			require.Len(t, cat.Services, 1)
			require.Equal(t, l.service, cat.Services[0].ID)
		})
	}
	for _, miss := range []func() (*tenants.Profile, bool){
		func() (*tenants.Profile, bool) { return reg.ByToken("bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI") }, // the demo tenant was removed
		func() (*tenants.Profile, bool) { return reg.ByToken("") },
		func() (*tenants.Profile, bool) { return reg.ByNumber("+4930123456") },
		func() (*tenants.Profile, bool) { return reg.Get("demo") },
	} {
		_, ok := miss()
		require.False(t, ok)
	}
}

// A profile carries what the conversation needs: catalogue, zone, policies.
// A shop may list the digest of any token, but only tokens minted by
// bookonce are ever accepted: a weak or hand-made token whose digest is
// listed is refused before the lookup, while the shop's minted token,
// listed beside it, still works.
func TestRegistryAcceptsOnlyMintedTokens(t *testing.T) {
	weak := []string{"password1", "nord-token", strings.Repeat("0", 64), apitoken.Prefix + "NORD"}
	digests := []string{tenants.TokenDigest("bkapi_NORDGARAGEEXAMPLETOKEN2222JE2AIBI")}
	for _, w := range weak {
		digests = append(digests, tenants.TokenDigest(w))
	}
	ctx := context.Background()
	pool := testsupport.Database(t)
	_, err := tenants.Apply(ctx, pool, shopsFile(t, func(s string) string {
		return strings.Replace(s, "api_token_sha256: [{{nordDigest}}]", "api_token_sha256: ["+strings.Join(digests, ", ")+"]", 1)
	}), tenants.ApplyOptions{})
	require.NoError(t, err)
	reg, err := tenants.LoadRegistry(ctx, pool, nil)
	require.NoError(t, err)

	for _, w := range weak {
		_, ok := reg.ByToken(w)
		require.False(t, ok, "a hand-made token was accepted")
		_, ok = reg.Authenticate(w)
		require.False(t, ok)
	}
	p, ok := reg.ByToken("bkapi_NORDGARAGEEXAMPLETOKEN2222JE2AIBI")
	require.True(t, ok)
	require.Equal(t, "nord", p.ID)
}

func TestRegistryProfileCarriesCatalogueAndPolicies(t *testing.T) {
	reg := loadShops(t)
	nord, _ := reg.Get("nord")
	cat := nord.Catalogue()
	require.Equal(t, []string{"Hauptuntersuchung", "TÜV", "HU", "MOT"}, cat.Services[0].Names, "the tenant's language first")
	require.Equal(t, map[string]string{"de": "Hauptuntersuchung", "en": "MOT"}, cat.Services[0].Labels)
	require.Equal(t, "07:00", cat.Opens)
	require.Equal(t, "16:00", cat.Closes)
	require.Equal(t, []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}, cat.Weekdays)
	require.Equal(t, "Europe/Berlin", nord.Location.String())
	require.Equal(t, 15*time.Minute, nord.Policies.HoldTTL)
	require.Equal(t, []time.Duration{24 * time.Hour, 2 * time.Hour}, nord.Policies.Reminders)
	require.Equal(t, &tenants.Interval{Opens: "21:00", Closes: "08:00"}, nord.Policies.QuietHours)
	london, _ := reg.Get("london")
	require.Len(t, london.Catalogue().Weekdays, 7)
}

func TestRenderUsesTheTenantsTextElseTheBuiltIn(t *testing.T) {
	reg := loadShops(t)
	nord, _ := reg.Get("nord")
	london, _ := reg.Get("london")
	data := tenants.MessageData{Service: "HU", When: "01.12.2026 14:00", Booking: "bk_1"}

	cases := []struct {
		name string
		p    *tenants.Profile
		lang tenants.Language
		tpl  tenants.TemplateName
		want string
	}{
		{"own text", nord, tenants.German, tenants.TemplateConfirmation, "Gebucht: HU am 01.12.2026 14:00 (bk_1)."},
		{"built-in German", nord, tenants.German, tenants.TemplateBookingStarted, "Danke! Wir buchen HU am 01.12.2026 14:00; die Bestätigung folgt."},
		{"built-in English for a German tenant", nord, tenants.English, tenants.TemplateConfirmation, "Your appointment is confirmed: HU on 01.12.2026 14:00 (booking bk_1)."},
		{"English tenant", london, london.Language, tenants.TemplateConfirmation, "Your appointment is confirmed: HU on 01.12.2026 14:00 (booking bk_1)."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.p.RenderIn(c.lang, c.tpl, data)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
	_, err := nord.RenderIn("fr", tenants.TemplateConfirmation, data)
	require.ErrorIs(t, err, tenants.ErrUnknownTemplate)
}

// A change reaches a loaded Registry on its next Reload, and lookups
// running meanwhile see either the old or the new tenants, never a mix.
func TestRegistryPicksUpAChangeOnReload(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	reg, err := tenants.LoadRegistry(ctx, pool, nil)
	require.NoError(t, err)
	demo, ok := reg.ByNumber("+4930123456")
	require.True(t, ok)
	require.Equal(t, tenants.German, demo.Language)

	_, err = tenants.Apply(ctx, pool, shopsFile(t, func(s string) string {
		return strings.Replace(s, "+442071234567", "+4930123456", 1) // the demo number goes to london
	}), tenants.ApplyOptions{})
	require.NoError(t, err)
	stale, ok := reg.ByNumber("+4930123456")
	require.True(t, ok)
	require.Equal(t, "demo", stale.ID, "until Reload, the loaded configuration stays")

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				p, ok := reg.ByNumber("+4930123456")
				if ok && p.ID != "demo" && p.ID != "london" {
					t.Errorf("number resolved to %s", p.ID)
				}
			}
		})
	}
	require.NoError(t, reg.Reload(ctx))
	close(stop)
	wg.Wait()
	fresh, ok := reg.ByNumber("whatsapp:+4930123456")
	require.True(t, ok)
	require.Equal(t, "london", fresh.ID)
	require.Equal(t, tenants.English, fresh.Language)
	_, ok = reg.Get("demo")
	require.False(t, ok)
}
