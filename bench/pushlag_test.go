package bench

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/shopcal"
	"github.com/bookonce/bookonce/tenants"
)

// measurePushLag is measureSyncLag with bay-1's calendar at Google (the
// fake, which posts a watch channel's notification as Google does): the
// gateway's public routes take the notification and tell the worker's
// mirror, which listens; its poll is l.poll (an hour) apart.
func measurePushLag(t *testing.T, l syncLagLoad) syncLagResult {
	e := newEnv(t)
	fake := shopcal.NewFakeGoogle("bookonce-bench.apps.googleusercontent.com", "app-secret")
	google := httptest.NewServer(fake.Handler())
	t.Cleanup(google.Close)
	const cal = "werkstatt-bay1@group.calendar.google.com"
	e.cfg.GoogleClientID, e.cfg.GoogleClientSecret, e.cfg.GoogleAPIURL = fake.ClientID, fake.ClientSecret, google.URL
	e.cfg.ShopCalendarSecrets = map[string]string{"google-bay-1": fake.AddCalendar(cal)}
	connectBay1(t, e, &tenants.ShopCalendar{Google: cal, Secret: "google-bay-1"})
	e.cfg.CalendarURL = stacktest.CalendarAPI(t, e.cfg, e.pool).URL

	log := slog.New(slog.NewTextHandler(testsupport.LogWriter(t), nil))
	gw, _ := stack.GatewayOn(stack.Registry(), e.cfg, e.pool, nil, testsupport.Tenants(t, e.pool), log)
	gateway := httptest.NewServer(gw.Handler())
	t.Cleanup(gateway.Close)
	e.cfg.PublicBaseURL, e.cfg.ShopCalendarPush = gateway.URL, true

	acts := stack.NewActivities(e.cfg, e.pool, testsupport.Tenants(t, e.pool), nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	acts.ShopMirror.Log = log
	go acts.ShopMirror.Run(ctx, l.poll)
	testsupport.Eventually(t, time.Minute, "the watch channel open", func() bool { return fake.Channels() == 1 })
	return timeEntries(t, acts, l, func(uid string, slot time.Time) {
		fake.Put(cal, gcal.Event{Id: uid, Summary: "Werkstatt intern",
			Start: &gcal.EventDateTime{DateTime: slot.UTC().Format(time.RFC3339)}, End: &gcal.EventDateTime{DateTime: slot.Add(time.Hour).UTC().Format(time.RFC3339)}})
	})
}
