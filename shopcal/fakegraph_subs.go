package shopcal

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// graphSub is a subscription at the fake.
type graphSub struct {
	graphSubscription
	calendar string // key of the calendar watched
	tenant   string
	expires  time.Time
}

// Graph's longest subscription to Outlook events (it has been 4230
// minutes, and is 10080 today).
const graphSubMax = 10080 * time.Minute

// subscriptionResource is the resource bookonce subscribes to: a
// mailbox's calendar's events.
var subscriptionResource = regexp.MustCompile(`(?i)^/?users/([^/]+)/calendars/([^/]+)/events$`)

// Pushes counts the notifications a receiver accepted (2xx).
func (f *FakeGraph) Pushes() int64 { return f.push.delivered.Load() }

// Subscriptions counts the subscriptions not expired.
func (f *FakeGraph) Subscriptions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.subs {
		if s.expires.After(f.now()) {
			n++
		}
	}
	return n
}

// RemoveSubscriptions ends every subscription as Graph may at any time,
// telling each one's lifecycle URL "subscriptionRemoved".
func (f *FakeGraph) RemoveSubscriptions() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, s := range f.subs {
		delete(f.subs, id)
		body, _ := json.Marshal(map[string]any{"value": []map[string]any{{"subscriptionId": id, "clientState": s.ClientState,
			"lifecycleEvent": "subscriptionRemoved", "subscriptionExpirationDateTime": s.ExpirationDateTime, "tenantId": s.tenant}}})
		f.push.deliver(s.LifecycleNotificationURL, http.Header{"Content-Type": {"application/json"}}, body)
	}
}

// subscribe creates a subscription (POST /v1.0/subscriptions) after its
// notification URL passed the validation handshake: a POST with
// ?validationToken= that must answer 200 with the token as plain text
// within 10 s. The handshake runs outside the lock, as Graph calls out
// while the create waits.
func (f *FakeGraph) subscribe(w http.ResponseWriter, r *http.Request) {
	var s graphSubscription
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
		graphError(w, http.StatusBadRequest, "InvalidRequest", "Unable to read the request body.")
		return
	}
	f.mu.Lock()
	tenant, ok := f.tokenTenant(w, r)
	m := subscriptionResource.FindStringSubmatch(s.Resource)
	var key string
	if m != nil {
		user, _ := url.PathUnescape(m[1])
		cal, _ := url.PathUnescape(m[2])
		key = strings.ToLower(user) + "/" + cal
	}
	_, exists := f.calendars[key]
	f.mu.Unlock()
	exp, err := time.Parse(time.RFC3339, s.ExpirationDateTime)
	switch {
	case !ok:
		return
	case m == nil || !exists:
		graphError(w, http.StatusNotFound, "ResourceNotFound", "Resource not found for the segment '"+s.Resource+"'.")
	case !pushAddress(s.NotificationURL) || s.LifecycleNotificationURL != "" && !pushAddress(s.LifecycleNotificationURL):
		graphError(w, http.StatusBadRequest, "InvalidRequest", "The Url must be an HTTPS URL.")
	case err != nil || !exp.After(f.now()) || exp.After(f.now().Add(graphSubMax)):
		graphError(w, http.StatusBadRequest, "InvalidRequest", "Subscription expiration can only be 10080 minutes in the future.")
	case len(s.ClientState) > 128:
		graphError(w, http.StatusBadRequest, "InvalidRequest", "clientState is limited to 128 characters.")
	case !validates(s.NotificationURL) || s.LifecycleNotificationURL != "" && !validates(s.LifecycleNotificationURL):
		graphError(w, http.StatusBadRequest, "ValidationError", "Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.")
	default:
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls["POST subscribe"]++
		s.ID = "7f105c7d-" + randomHex(12)
		f.subs[s.ID] = &graphSub{graphSubscription: s, calendar: key, tenant: tenant, expires: exp}
		writeGoogleJSON(w, http.StatusCreated, s)
	}
}

// validates is Graph's handshake with a notification URL.
func validates(address string) bool {
	token := "Validation: Testing client application reachability for subscription Request-Id: " + randomHex(16)
	req, err := http.NewRequest(http.MethodPost, address+sep(address)+"validationToken="+url.QueryEscape(token), strings.NewReader(""))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode == http.StatusOK && bytes.Equal(body, []byte(token))
}

func sep(address string) string {
	if strings.Contains(address, "?") {
		return "&"
	}
	return "?"
}

// renew extends a subscription (PATCH expirationDateTime).
func (f *FakeGraph) renew(w http.ResponseWriter, r *http.Request) {
	var patch graphSubscription
	if err := json.NewDecoder(r.Body).Decode(&patch); err != nil {
		graphError(w, http.StatusBadRequest, "InvalidRequest", "Unable to read the request body.")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.tokenTenant(w, r); !ok {
		return
	}
	s, ok := f.subs[r.PathValue("id")]
	exp, err := time.Parse(time.RFC3339, patch.ExpirationDateTime)
	switch {
	case !ok || !s.expires.After(f.now()):
		graphError(w, http.StatusNotFound, "ResourceNotFound", "The object was not found.")
	case err != nil || !exp.After(f.now()) || exp.After(f.now().Add(graphSubMax)):
		graphError(w, http.StatusBadRequest, "InvalidRequest", "Subscription expiration can only be 10080 minutes in the future.")
	default:
		f.calls["PATCH renew"]++
		s.expires, s.ExpirationDateTime = exp, patch.ExpirationDateTime
		writeGoogleJSON(w, http.StatusOK, s.graphSubscription)
	}
}

// unsubscribe deletes a subscription.
func (f *FakeGraph) unsubscribe(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.tokenTenant(w, r); !ok {
		return
	}
	if _, ok := f.subs[r.PathValue("id")]; !ok {
		graphError(w, http.StatusNotFound, "ResourceNotFound", "The object was not found.")
		return
	}
	f.calls["DELETE unsubscribe"]++
	delete(f.subs, r.PathValue("id"))
	w.WriteHeader(http.StatusNoContent)
}

// changed notifies every live subscription on the calendar of a change
// to event id, as Graph does: a collection of one notification with the
// subscription's clientState, posted to its URL, answered 2xx within 3 s
// or retried.
func (f *FakeGraph) changed(calendar, changeType, id string) {
	for sid, s := range f.subs {
		if s.calendar != calendar || !s.expires.After(f.now()) || !strings.Contains(s.ChangeType, changeType) {
			continue
		}
		user, _, _ := strings.Cut(calendar, "/")
		body, _ := json.Marshal(map[string]any{"value": []map[string]any{{
			"subscriptionId": sid, "subscriptionExpirationDateTime": s.ExpirationDateTime, "changeType": changeType,
			"resource": "Users/" + user + "/Events/" + id, "clientState": s.ClientState, "tenantId": s.tenant,
			"resourceData": map[string]string{"@odata.type": "#Microsoft.Graph.Event", "@odata.id": "Users/" + user + "/Events/" + id, "id": id},
		}}})
		f.push.deliver(s.NotificationURL, http.Header{"Content-Type": {"application/json"}}, body)
	}
}

// Remove deletes an event as staff do in Outlook.
func (f *FakeGraph) Remove(user, calendar, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := strings.ToLower(user) + "/" + calendar
	if _, ok := f.calendars[key][id]; ok {
		delete(f.calendars[key], id)
		f.changed(key, "deleted", id)
	}
}
