package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/internal/radicale"
	"github.com/bookonce/bookonce/shopcal"
	"github.com/bookonce/bookonce/tenants"
)

// The shops' own calendars (docs/calendars.md): a share of the drill's
// resources has one, at each provider, so every booking there must land
// exactly once in it whatever the workers, the providers and the network
// do. CalDAV is a real server (Radicale); Google and Microsoft 365 are
// the fakes of their APIs, which the workers reach as the real ones.
const (
	providerCalDAV    = "caldav"
	providerGoogle    = "google"
	providerMicrosoft = "microsoft"
)

// calKey is a resource of a shop.
type calKey struct{ tenant, resource string }

// calendarPlan is which provider keeps which resource's calendar. The
// first bays take most bookings (holds take the first free resource), so
// each provider has a first bay or a bay shared by both shops; the second
// shop's technician has no calendar of the shop's.
var calendarPlan = map[calKey]string{
	{"demo", "bay-1"}: providerCalDAV, {"demo", "bay-2"}: providerGoogle, {"demo", "tech-anna"}: providerMicrosoft,
	{secondShop, "bay-1"}: providerMicrosoft, {secondShop, "bay-2"}: providerGoogle,
}

// The drill's shops' Microsoft 365 tenant and mailbox.
const (
	drillEntraTenant = "5d1b0c2a-0000-4000-8000-00000000d111"
	drillMailbox     = "werkstatt@drill.example"
)

// shopCals are the calendars of calendarPlan and what the workers need to
// reach them.
type shopCals struct {
	radicale string // Radicale's base URL; "": not installed, no CalDAV share
	// davProxy is Radicale's fault proxy, as the workers reach it.
	davProxy string
	google   *shopcal.FakeGoogle
	graph    *shopcal.FakeGraph
	// ids are the calendars by resource: a CalDAV calendar's URL, a
	// Google calendar's ID, a Microsoft calendar's ID in drillMailbox.
	ids  map[calKey]string
	vars map[string]string
	// gates cut the workers' connections to the providers in an outage.
	gates []*providerGate
}

// gateList is the gates (none without calendars).
func (c *shopCals) gateList() []*providerGate {
	if c == nil {
		return nil
	}
	return c.gates
}

// providerGate is a provider as the workers reach it: while down, every
// connection is cut without an answer, as a provider that is unreachable.
type providerGate struct {
	down atomic.Bool
	next http.Handler
}

func (g *providerGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.down.Load() {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	g.next.ServeHTTP(w, r)
}

// startShopCalendars starts Radicale and serves the fakes of Google and
// Microsoft, makes the calendars of calendarPlan, and returns them with
// the workers' settings.
func (e *env) startShopCalendars(ctx context.Context) (*shopCals, error) {
	c := &shopCals{google: shopcal.NewFakeGoogle("bookonce-drill.apps.googleusercontent.com", "drill-google-secret"),
		graph: shopcal.NewFakeGraph("0b4f9c1e-bookonce-drill", "drill-graph-secret"), ids: map[calKey]string{}}
	googleURL, err := e.serveHandler(ctx, c.google.Handler())
	if err != nil {
		return nil, err
	}
	graphURL, err := e.serveHandler(ctx, c.graph.Handler())
	if err != nil {
		return nil, err
	}
	if err := e.startRadicale(ctx, c); err != nil {
		return nil, err
	}
	// The workers reach each provider through a fault proxy; the drill
	// (staff, the final check) directly.
	if googleURL, err = e.providerProxy(ctx, c, providerGoogle, googleURL); err != nil {
		return nil, err
	}
	if graphURL, err = e.providerProxy(ctx, c, providerMicrosoft, graphURL); err != nil {
		return nil, err
	}
	if c.radicale != "" {
		if c.davProxy, err = e.providerProxy(ctx, c, providerCalDAV, c.radicale); err != nil {
			return nil, err
		}
	}
	secrets := map[string]string{}
	for k, provider := range calendarPlan {
		switch provider {
		case providerCalDAV:
			if c.radicale == "" {
				continue
			}
			if c.ids[k], err = radicale.MakeCalendar(ctx, c.radicale, "werkstatt", k.tenant+"-"+k.resource); err != nil {
				return nil, err
			}
		case providerGoogle:
			c.ids[k] = k.tenant + "-" + k.resource + "@group.calendar.google.com"
			secrets["google-"+k.tenant+"-"+k.resource] = c.google.AddCalendar(c.ids[k])
		case providerMicrosoft:
			c.ids[k] = "AAMkAD" + strings.ReplaceAll(k.tenant+k.resource, "-", "")
			c.graph.AddCalendar(drillEntraTenant, drillMailbox, c.ids[k])
		}
	}
	raw, err := json.Marshal(secrets)
	if err != nil {
		return nil, err
	}
	c.vars = map[string]string{"SHOP_CALENDAR_SECRETS": string(raw), "SHOP_CALENDAR_POLL": "5s",
		"GOOGLE_CLIENT_ID": c.google.ClientID, "GOOGLE_CLIENT_SECRET": c.google.ClientSecret, "GOOGLE_API_URL": googleURL,
		"MICROSOFT_CLIENT_ID": c.graph.ClientID, "MICROSOFT_CLIENT_SECRET": c.graph.ClientSecret, "MICROSOFT_API_URL": graphURL}
	return c, nil
}

// providerProxy puts a fault proxy (Options.ShopCalendars) and an
// outage gate in front of a provider and returns its URL. What passes it
// is not logged with the other exchanges: the providers take no
// idempotency keys, and the drill's key checks would read their writes
// as duplicates.
func (e *env) providerProxy(ctx context.Context, c *shopCals, provider, upstream string) (string, error) {
	seed := e.opts.Seed ^ uint64(len(provider))<<32 ^ 0xca1e
	p, err := chaos.New(upstream, e.opts.ShopCalendars, chaos.WithRand(mrand.New(mrand.NewPCG(seed, uint64(len(e.proxies))))))
	if err != nil {
		return "", fmt.Errorf("%s proxy: %w", provider, err)
	}
	e.proxies[provider] = p
	g := &providerGate{next: p}
	c.gates = append(c.gates, g)
	return e.serveHandler(ctx, g)
}

// startRadicale starts the CalDAV server, or goes on without the CalDAV
// share where it is not installed (unless BOOKONCE_REQUIRE names it).
func (e *env) startRadicale(ctx context.Context, c *shopCals) error {
	dir, err := os.MkdirTemp("", "bookonce-drill-radicale-")
	if err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(e.opts.LogDir, "radicale.log"))
	if err != nil {
		return err
	}
	s, err := radicale.Start(ctx, dir, log)
	if errors.Is(err, radicale.ErrNotInstalled) && !radicale.Required() {
		e.opts.progress("%v: the drill's shops have no CalDAV calendar", err)
		return errors.Join(log.Close(), os.RemoveAll(dir))
	}
	if err != nil {
		return errors.Join(fmt.Errorf("the shops' CalDAV server: %w", err), log.Close(), os.RemoveAll(dir))
	}
	c.radicale = s.URL
	e.stops = append(e.stops, func() { _ = s.Stop(); _ = log.Close(); _ = os.RemoveAll(dir) })
	return nil
}

// calendar is how tenants.yaml connects a resource's calendar (nil:
// none).
func (c *shopCals) calendar(tenant, resource string) *tenants.ShopCalendar {
	if c == nil {
		return nil
	}
	k := calKey{tenant, resource}
	id, ok := c.ids[k]
	if !ok {
		return nil
	}
	switch calendarPlan[k] {
	case providerCalDAV:
		return &tenants.ShopCalendar{CalDAV: c.davProxy + strings.TrimPrefix(id, c.radicale), Username: "werkstatt"}
	case providerGoogle:
		return &tenants.ShopCalendar{Google: id, Secret: "google-" + tenant + "-" + resource}
	default:
		return &tenants.ShopCalendar{Microsoft: drillMailbox, EntraTenant: drillEntraTenant, CalendarID: id}
	}
}

// providerOutage cuts every connection to the shops' calendars for d.
func (c *conductor) providerOutage(wait func(time.Duration) bool, d time.Duration) {
	c.log.record("provider_outage", "shop calendars", fmt.Sprintf("connections cut, kept down %s", d), c.progress,
		func() error {
			for _, g := range c.providers {
				g.down.Store(true)
			}
			return nil
		},
		func() error {
			wait(d)
			for _, g := range c.providers {
				g.down.Store(false)
			}
			return nil
		})
}
