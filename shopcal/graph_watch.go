package shopcal

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/bookonce/bookonce/outcome"
)

// graphMaxTTL is the longest subscription to Outlook events Graph has
// always granted (it grants more today; asking less is always valid).
const graphMaxTTL = 4230 * time.Minute

// graphSubscription is Graph's subscription resource (what bookonce
// uses).
type graphSubscription struct {
	ID                       string `json:"id,omitempty"`
	ChangeType               string `json:"changeType,omitempty"`
	NotificationURL          string `json:"notificationUrl,omitempty"`
	LifecycleNotificationURL string `json:"lifecycleNotificationUrl,omitempty"`
	Resource                 string `json:"resource,omitempty"`
	ExpirationDateTime       string `json:"expirationDateTime"`
	ClientState              string `json:"clientState,omitempty"`
}

// Watching is Microsoft and the mailbox's calendar.
func (g *Graph) Watching() (provider, calendar string) { return "microsoft", g.User + "/" + g.Calendar }

func graphExpiry(ttl time.Duration) string {
	return time.Now().Add(min(ttl, graphMaxTTL)).UTC().Format(time.RFC3339Nano)
}

// Watch subscribes to the calendar's events: Graph first checks that
// address echoes a validation token, then posts created, updated and
// deleted notifications there with clientState (the channel's ID and
// secret), and lifecycle notifications (a subscription it removed) too.
func (g *Graph) Watch(ctx context.Context, ch Channel, address string, ttl time.Duration) (Channel, error) {
	sub := graphSubscription{ChangeType: "created,updated,deleted", NotificationURL: address, LifecycleNotificationURL: address,
		Resource:           "/users/" + url.PathEscape(g.User) + "/calendars/" + url.PathEscape(g.Calendar) + "/events",
		ExpirationDateTime: graphExpiry(ttl), ClientState: ch.ID + "." + ch.Secret}
	var got graphSubscription
	if err := g.do(ctx, "watch", http.MethodPost, g.base+"/v1.0/subscriptions", "", sub, &got); err != nil {
		return ch, err
	}
	return graphChannel(ch, got)
}

func graphChannel(ch Channel, got graphSubscription) (Channel, error) {
	exp, err := time.Parse(time.RFC3339, got.ExpirationDateTime)
	if err != nil {
		return ch, &Error{Op: "watch", Outcome: outcome.Unknown, Err: err}
	}
	ch.ExternalID, ch.Expires = got.ID, exp.UTC()
	return ch, nil
}

// Renew extends the subscription (PATCH expirationDateTime); ok is false
// when Graph no longer has it.
func (g *Graph) Renew(ctx context.Context, ch Channel, ttl time.Duration) (Channel, bool, error) {
	var got graphSubscription
	err := g.do(ctx, "renew", http.MethodPatch, g.base+"/v1.0/subscriptions/"+url.PathEscape(ch.ExternalID), "",
		graphSubscription{ExpirationDateTime: graphExpiry(ttl)}, &got)
	if statusOfErr(err) == http.StatusNotFound {
		return ch, false, nil
	}
	if err != nil {
		return ch, false, err
	}
	got.ID = ch.ExternalID
	ch, err = graphChannel(ch, got)
	return ch, err == nil, err
}

// Stop deletes the subscription; one Graph no longer has is deleted.
func (g *Graph) Stop(ctx context.Context, ch Channel) error {
	err := g.do(ctx, "stop", http.MethodDelete, g.base+"/v1.0/subscriptions/"+url.PathEscape(ch.ExternalID), "", nil, nil)
	if statusOfErr(err) == http.StatusNotFound {
		return nil
	}
	return err
}
