package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/shopcal"
	"github.com/bookonce/bookonce/tenants"
)

// ShopCalendars finds a resource's own calendar from the tenants'
// configuration as applied (reg, read at each call, so a calendar
// connected by `starter tenants apply` is written without a restart) and
// its credential by the secret's name in SHOP_CALENDAR_SECRETS: a CalDAV
// password, or a Google refresh token of bookonce's Google app
// (GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET; GOOGLE_API_URL for a fake); a
// Microsoft 365 calendar is reached with bookonce's app registration
// (MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET; MICROSOFT_API_URL).
func ShopCalendars(cfg config.Config, reg *tenants.Registry) activities.ShopCalendars {
	hc := &http.Client{Timeout: 30 * time.Second, Transport: tracing.Transport(nil)}
	google := shopcal.GoogleApp{ClientID: cfg.GoogleClientID, ClientSecret: cfg.GoogleClientSecret, BaseURL: cfg.GoogleAPIURL}
	microsoft := shopcal.MicrosoftApp{ClientID: cfg.MicrosoftClientID, ClientSecret: cfg.MicrosoftClientSecret, BaseURL: cfg.MicrosoftAPIURL}
	conns := &connections{conns: map[string]shopcal.Provider{}}
	return func(tenant, resource string) (shopcal.Provider, bool, error) {
		if reg == nil {
			return nil, false, nil
		}
		p, ok := reg.Get(tenant)
		if !ok {
			return nil, false, nil
		}
		for _, r := range p.Resources {
			if r.Calendar != nil && resource == "" {
				return nil, true, nil
			}
			if r.ID != resource || r.Calendar == nil {
				continue
			}
			secret, ok := cfg.ShopCalendarSecrets[r.Calendar.Secret]
			if r.Calendar.Secret != "" && !ok {
				return nil, false, fmt.Errorf("the calendar of %s/%s names secret %q, which SHOP_CALENDAR_SECRETS lacks", tenant, resource, r.Calendar.Secret)
			}
			switch c := *r.Calendar; {
			case c.Google != "" && google.ClientID == "":
				return nil, false, errors.New("a shop's Google calendar needs bookonce's Google app: set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET")
			case c.Google != "":
				g, err := conns.get("google\x00"+c.Google+"\x00"+secret, func() (shopcal.Provider, error) {
					return shopcal.NewGoogle(context.Background(), google, c.Google, secret, hc)
				})
				return g, err == nil, err
			case c.Microsoft != "" && microsoft.ClientID == "":
				return nil, false, errors.New("a shop's Microsoft 365 calendar needs bookonce's app registration: set MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET")
			case c.Microsoft != "":
				g, err := conns.get("microsoft\x00"+c.EntraTenant+"\x00"+c.Microsoft+"\x00"+c.CalendarID, func() (shopcal.Provider, error) {
					return shopcal.NewGraph(context.Background(), microsoft, c.EntraTenant, c.Microsoft, c.CalendarID, hc), nil
				})
				return g, err == nil, err
			}
			return &shopcal.CalDAV{Calendar: r.Calendar.CalDAV, Username: r.Calendar.Username, Password: secret, HTTP: hc}, true, nil
		}
		return nil, false, nil
	}
}

// connections keeps one connection per shop calendar at Google or
// Microsoft (by what identifies it and its credential), so its access
// token is reused until it expires, not fetched again for every call.
type connections struct {
	mu    sync.Mutex
	conns map[string]shopcal.Provider
}

func (c *connections) get(key string, connect func() (shopcal.Provider, error)) (shopcal.Provider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.conns[key]; ok {
		return p, nil
	}
	p, err := connect()
	if err != nil {
		return nil, err
	}
	c.conns[key] = p
	return p, nil
}

// ShopMirror mirrors what staff entered in the shops' calendars into
// bookonce's calendar as blocks, through the calendar API as the tenant
// (acts.Calendar), reading the calendars acts.ShopCalendars finds, and
// opens a calendar_conflict case, once per booking and event, for a block
// over a booking. With cfg.ShopCalendarPush it keeps push channels open
// on the Google and Microsoft calendars, to the gateway at
// PUBLIC_BASE_URL, and reads a calendar again when one fires.
func ShopMirror(cfg config.Config, pool *pgxpool.Pool, reg *tenants.Registry, acts *activities.Activities, log *slog.Logger) *shopcal.Mirror {
	var push *shopcal.Push
	if cfg.ShopCalendarPush && pool != nil {
		push = &shopcal.Push{Channels: &shopcal.Channels{Pool: pool}, URL: cfg.PublicBaseURL}
	}
	return &shopcal.Mirror{
		Push:      push,
		Calendars: acts.ShopCalendars,
		Tenants: func() []string {
			var ids []string
			for _, p := range reg.All() {
				ids = append(ids, p.ID)
			}
			return ids
		},
		Resources: func(tenant string) []string {
			p, ok := reg.Get(tenant)
			if !ok {
				return nil
			}
			var ids []string
			for _, r := range p.Resources {
				if r.Calendar != nil {
					ids = append(ids, r.ID)
				}
			}
			return ids
		},
		Zone: reg.Zone,
		Blocks: func(ctx context.Context, tenant, resource string, req calendar.BlocksRequest) (calendar.BlocksResult, error) {
			c, err := acts.Calendar(tenant)
			if err != nil {
				return calendar.BlocksResult{}, err
			}
			return c.ReplaceBlocks(ctx, resource, req)
		},
		Conflict: func(ctx context.Context, tenant string, c calendar.Conflict) error {
			return openCalendarConflict(ctx, acts.Reviews, tenant, c)
		},
		Unreachable: func(ctx context.Context, tenant, resource string, err error) error {
			return openCalendarConnection(ctx, acts.Reviews, tenant, resource, err)
		},
		Log: log.With("component", "shop-calendars"),
	}
}

// openCalendarConflict opens the case for a block over a booking, keyed
// by the booking and the event's instance: the sweep finds the conflict
// again every time until a person settles it, and opens it once.
func openCalendarConflict(ctx context.Context, reviews *review.Store, tenant string, c calendar.Conflict) error {
	if reviews == nil {
		return fmt.Errorf("no review queue for the conflict of booking %s", c.Booking.ID)
	}
	details, err := json.Marshal(map[string]any{
		"booking_id": c.Booking.ID, "resource_id": c.Booking.ResourceID, "service": c.Booking.Service,
		"start": c.Booking.Start, "end": c.Booking.End,
		"event_uid": c.Block.UID, "event_start": c.Block.Start, "event_end": c.Block.End,
	})
	if err != nil {
		return err
	}
	key := "calendar-conflict:" + tenant + ":" + c.Booking.ID + ":" + c.Block.UID + ":" + c.Block.Start.Format(time.RFC3339)
	_, err = reviews.Open(ctx, key, review.Case{Tenant: tenant, WorkflowID: c.Booking.Reference, Reason: review.ReasonCalendarConflict, Details: details})
	return err
}

// openCalendarConnection opens the case for a calendar that refuses for
// good: one a day per resource while it lasts, so a person who
// reconnected it and resolved the case hears again if it breaks again.
func openCalendarConnection(ctx context.Context, reviews *review.Store, tenant, resource string, cause error) error {
	if reviews == nil {
		return fmt.Errorf("no review queue for the calendar of %s/%s", tenant, resource)
	}
	details, err := json.Marshal(map[string]any{"resource_id": resource, "error": cause.Error()})
	if err != nil {
		return err
	}
	day := time.Now().UTC().Format(time.DateOnly)
	_, err = reviews.Open(ctx, "calendar-connection:"+tenant+":"+resource+":"+day,
		review.Case{Tenant: tenant, WorkflowID: "shop-calendar:" + resource, Reason: review.ReasonCalendarConnection, Details: details})
	return err
}
