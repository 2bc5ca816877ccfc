package shopcal

import (
	"context"
	"net/http"
	"strconv"
	"time"

	gcal "google.golang.org/api/calendar/v3"
)

// Watching is Google and the calendar's ID.
func (g *Google) Watching() (provider, calendar string) { return "google", g.Calendar }

// Watch opens a watch channel on the calendar's events (events.watch):
// Google posts to address, with the channel's ID and token in headers, on
// every change, until the channel expires.
func (g *Google) Watch(ctx context.Context, ch Channel, address string, ttl time.Duration) (Channel, error) {
	got, err := g.svc.Events.Watch(g.Calendar, &gcal.Channel{Id: ch.ID, Type: "web_hook", Address: address, Token: ch.Secret,
		Params: map[string]string{"ttl": strconv.Itoa(int(ttl.Seconds()))}}).Context(ctx).Do()
	if err != nil {
		return ch, googleError("watch", err)
	}
	ch.ExternalID, ch.Expires = got.ResourceId, time.UnixMilli(got.Expiration).UTC()
	return ch, nil
}

// Renew: a Google channel cannot be extended; a new one replaces it.
func (g *Google) Renew(_ context.Context, ch Channel, _ time.Duration) (Channel, bool, error) {
	return ch, false, nil
}

// Stop closes the channel (channels.stop); one Google no longer knows is
// closed.
func (g *Google) Stop(ctx context.Context, ch Channel) error {
	err := g.svc.Channels.Stop(&gcal.Channel{Id: ch.ID, ResourceId: ch.ExternalID}).Context(ctx).Do()
	if err == nil || googleStatus(err) == http.StatusNotFound {
		return nil
	}
	return googleError("stop", err)
}
