package shopcal

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/bookonce/bookonce/internal/web"
)

// The gateway's routes for the providers' push notifications.
const (
	RouteGooglePush    = "/webhooks/calendar/google"
	RouteMicrosoftPush = "/webhooks/calendar/microsoft"
)

func pushRoute(provider string) string {
	if provider == "google" {
		return RouteGooglePush
	}
	return RouteMicrosoftPush
}

// Receiver takes the providers' push notifications at the gateway: it
// checks each against its channel's secret and tells the workers which
// resource's calendar changed. A notification says only that something
// changed; the worker reads the calendar itself.
type Receiver struct {
	Channels *Channels
	Log      *slog.Logger
}

// Routes are the receiver's routes, for the gateway's public mux.
func (rc *Receiver) Routes() map[string]http.Handler {
	return map[string]http.Handler{
		"POST " + RouteGooglePush:    http.HandlerFunc(rc.google),
		"POST " + RouteMicrosoftPush: http.HandlerFunc(rc.microsoft),
	}
}

// google takes a watch channel's notification: headers only. Google
// retries 500, 502, 503 and 504 with backoff and drops anything else, so
// an unknown channel (stopped, replaced) is answered 404 and a database
// that failed 503.
func (rc *Receiver) google(w http.ResponseWriter, r *http.Request) {
	ch, ok, err := rc.Channels.Verify(r.Context(), "google", r.Header.Get("X-Goog-Channel-ID"), r.Header.Get("X-Goog-Channel-Token"))
	switch {
	case err != nil:
		rc.log().Error("shop calendar push: find the channel", "err", err)
		web.WriteProblem(w, web.NewProblem(http.StatusServiceUnavailable, "unavailable", "try again"))
		return
	case !ok:
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "unknown_channel", "no such channel, or a wrong token"))
		return
	}
	// "sync" opens every channel and announces no change.
	if r.Header.Get("X-Goog-Resource-State") != "sync" {
		if err := rc.Channels.Changed(r.Context(), ch.Tenant, ch.Resource); err != nil {
			rc.log().Error("shop calendar push: tell the workers", "tenant", ch.Tenant, "resource", ch.Resource, "err", err)
			web.WriteProblem(w, web.NewProblem(http.StatusServiceUnavailable, "unavailable", "try again"))
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// graphNotification is one of Graph's change or lifecycle notifications.
type graphNotification struct {
	SubscriptionID string `json:"subscriptionId"`
	ClientState    string `json:"clientState"`
	ChangeType     string `json:"changeType,omitempty"`
	LifecycleEvent string `json:"lifecycleEvent,omitempty"` // reauthorizationRequired, subscriptionRemoved, missed
	Resource       string `json:"resource,omitempty"`
	TenantID       string `json:"tenantId,omitempty"`
}

// microsoft takes Graph's notifications. A subscription is created only
// after this URL echoed the validationToken Graph sends it (as plain
// text, within 10 s). A notification's clientState is the channel's ID
// and secret; one that does not match is dropped, as Graph's docs say.
// Graph retries what is not answered 2xx within 3 s, for hours.
func (rc *Receiver) microsoft(w http.ResponseWriter, r *http.Request) {
	if token := r.URL.Query().Get("validationToken"); token != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, token)
		return
	}
	var body struct {
		Value []graphNotification `json:"value"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_json", "a Graph change notification collection was expected"))
		return
	}
	for _, n := range body.Value {
		if err := rc.graphNotification(r, n); err != nil {
			rc.log().Error("shop calendar push: a Graph notification", "err", err)
			web.WriteProblem(w, web.NewProblem(http.StatusServiceUnavailable, "unavailable", "try again"))
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

func (rc *Receiver) graphNotification(r *http.Request, n graphNotification) error {
	id, secret, _ := strings.Cut(n.ClientState, ".")
	ch, ok, err := rc.Channels.Verify(r.Context(), "microsoft", id, secret)
	if err != nil || !ok {
		return err // a wrong clientState is dropped
	}
	if n.LifecycleEvent == "subscriptionRemoved" {
		// Graph ended it: the next sweep opens a new one; read now what
		// may have changed meanwhile.
		if err := rc.Channels.Remove(r.Context(), ch.ID); err != nil {
			return err
		}
	}
	return rc.Channels.Changed(r.Context(), ch.Tenant, ch.Resource)
}

func (rc *Receiver) log() *slog.Logger {
	if rc.Log != nil {
		return rc.Log
	}
	return slog.Default()
}
