package shopcal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	gcal "google.golang.org/api/calendar/v3"
)

// googleChannel is a watch channel at the fake.
type googleChannel struct {
	gcal.Channel
	calendar string
	messages int64
}

// Google's limits on a channel's life: it asks for params.ttl seconds,
// a week when none is given, and grants at most a month.
const (
	googleDefaultTTL = 7 * 24 * time.Hour
	googleMaxTTL     = 30 * 24 * time.Hour
)

// Pushes counts the notifications a receiver accepted (2xx).
func (f *FakeGoogle) Pushes() int64 { return f.push.delivered.Load() }

// Channels counts the watch channels open and not expired.
func (f *FakeGoogle) Channels() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, ch := range f.channels {
		if time.UnixMilli(ch.Expiration).After(f.now()) {
			n++
		}
	}
	return n
}

// watch opens a channel on a calendar's events (events.watch): a
// web_hook to an HTTPS address with an ID unique to the project; the
// first message, "sync", follows at once.
func (f *FakeGoogle) watch(w http.ResponseWriter, r *http.Request, _ map[string]*gcal.Event) {
	var ch gcal.Channel
	if err := json.NewDecoder(r.Body).Decode(&ch); err != nil {
		writeGoogleError(w, http.StatusBadRequest, "parseError", "Parse Error")
		return
	}
	switch {
	case ch.Type != "web_hook":
		writeGoogleError(w, http.StatusBadRequest, "invalid", "Invalid value for: "+ch.Type+" is not a valid value")
		return
	case !pushAddress(ch.Address):
		writeGoogleError(w, http.StatusBadRequest, "push.webhookUrlNotHttps", "WebHook callback must be HTTPS: "+ch.Address)
		return
	case ch.Id == "" || f.channels[ch.Id] != nil:
		writeGoogleError(w, http.StatusBadRequest, "channelIdNotUnique", "Channel id not unique")
		return
	}
	ttl := googleDefaultTTL
	if s, err := strconv.Atoi(ch.Params["ttl"]); err == nil && s > 0 {
		ttl = min(time.Duration(s)*time.Second, googleMaxTTL)
	}
	sum := sha256.Sum256([]byte(r.PathValue("cal")))
	ch.Kind, ch.ResourceId = "api#channel", hex.EncodeToString(sum[:10])
	ch.ResourceUri = "https://www.googleapis.com/calendar/v3/calendars/" + r.PathValue("cal") + "/events?alt=json"
	ch.Expiration, ch.Params = f.now().Add(ttl).UnixMilli(), nil
	c := &googleChannel{Channel: ch, calendar: r.PathValue("cal")}
	f.channels[ch.Id] = c
	f.notify(c, "sync")
	writeGoogleJSON(w, http.StatusOK, &ch)
}

// stop closes a channel (channels.stop): its ID and resourceId.
func (f *FakeGoogle) stop(w http.ResponseWriter, r *http.Request) {
	var ch gcal.Channel
	if err := json.NewDecoder(r.Body).Decode(&ch); err != nil {
		writeGoogleError(w, http.StatusBadRequest, "parseError", "Parse Error")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.authorized(w, r) {
		return
	}
	c, ok := f.channels[ch.Id]
	if !ok || c.ResourceId != ch.ResourceId {
		writeGoogleError(w, http.StatusNotFound, "notFound", "Channel '"+ch.Id+"' not found for project '1'")
		return
	}
	f.calls["POST stop"]++
	delete(f.channels, ch.Id)
	w.WriteHeader(http.StatusNoContent)
}

// changed tells every live channel on the calendar that its events
// changed (Google says only that, never what).
func (f *FakeGoogle) changed(calendar string) {
	for _, c := range f.channels {
		if c.calendar == calendar {
			f.notify(c, "exists")
		}
	}
}

// notify sends one message of a channel as Google does: an empty POST
// with the X-Goog-* headers, retried on 500, 502, 503 and 504. An
// expired channel sends nothing.
func (f *FakeGoogle) notify(c *googleChannel, state string) {
	exp := time.UnixMilli(c.Expiration)
	if !exp.After(f.now()) {
		return
	}
	c.messages++
	h := http.Header{}
	h.Set("X-Goog-Channel-ID", c.Id)
	h.Set("X-Goog-Channel-Token", c.Token)
	h.Set("X-Goog-Channel-Expiration", exp.UTC().Format(http.TimeFormat))
	h.Set("X-Goog-Resource-ID", c.ResourceId)
	h.Set("X-Goog-Resource-URI", c.ResourceUri)
	h.Set("X-Goog-Resource-State", state)
	h.Set("X-Goog-Message-Number", strconv.FormatInt(c.messages, 10))
	f.push.deliver(c.Address, h, nil)
}
