package shopcal

import (
	"context"
	"sync"
	"time"
)

// Watcher is a calendar that calls bookonce when it changes (Google's
// watch channels, Graph's subscriptions); CalDAV has no such thing and is
// polled.
type Watcher interface {
	// Watching names the provider ("google", "microsoft") and the
	// calendar watched.
	Watching() (provider, calendar string)
	// Watch opens ch: the provider calls address with ch.ID and ch.Secret
	// on every change until it expires (asked: ttl). It returns ch with
	// ExternalID and Expires set.
	Watch(ctx context.Context, ch Channel, address string, ttl time.Duration) (Channel, error)
	// Renew extends ch by ttl; ok false: this provider cannot extend a
	// channel, or ch is gone, and a new one is opened.
	Renew(ctx context.Context, ch Channel, ttl time.Duration) (renewed Channel, ok bool, err error)
	// Stop closes ch; one gone already is closed.
	Stop(ctx context.Context, ch Channel) error
}

// Push keeps a push channel open on every calendar that offers one, so a
// change staff make is mirrored within seconds, not at the next poll
// (which goes on, for CalDAV and for a notification lost on the way).
type Push struct {
	Channels *Channels
	// URL is the gateway's public base URL: the providers call URL +
	// RouteGooglePush or RouteMicrosoftPush (HTTPS, for them to accept it).
	URL string
	// TTL is the life asked for a channel (0: DefaultChannelTTL); one is
	// renewed when less than a third of it is left.
	TTL time.Duration
}

// DefaultChannelTTL is under Graph's longest subscription to calendar
// events; Google keeps a channel as long as asked up to its own limit.
const DefaultChannelTTL = 70 * time.Hour

// watchRetry is how long the mirror waits after a channel could not be
// opened (a provider that refuses this URL would refuse it every sweep).
const watchRetry = 10 * time.Minute

func (p *Push) ttl() time.Duration {
	if p.TTL > 0 {
		return p.TTL
	}
	return DefaultChannelTTL
}

// pushState is the mirror's own: refreshes asked for by notifications,
// and channels that failed to open.
type pushState struct {
	mu      sync.Mutex
	running map[string]bool
	again   map[string]bool
	failed  map[string]time.Time
}

// watch keeps the resource's channel open: it opens one where there is
// none (or it watches another calendar), renews one near its end, and
// stops the one a new one replaced. Failures are logged: the poll goes on.
func (m *Mirror) watch(ctx context.Context, tenant, resource string) {
	p, ok, err := m.Calendars(tenant, resource)
	w, watches := p.(Watcher)
	if !ok || err != nil || !watches {
		return
	}
	provider, calendar := w.Watching()
	cur, found, err := m.Push.Channels.Current(ctx, tenant, resource)
	if err != nil {
		m.log().Warn("shop calendars: read the push channel", "tenant", tenant, "resource", resource, "err", err)
		return
	}
	now, ttl := m.now(), m.Push.ttl()
	same := found && cur.Provider == provider && cur.Calendar == calendar
	switch {
	case same && cur.Expires.Sub(now) > ttl/3:
		observePush(tenant, resource, cur.Expires)
		return
	case m.failedRecently(tenant, resource, now):
		return
	}
	if same {
		if renewed, ok, err := w.Renew(ctx, cur, ttl); err == nil && ok {
			if err := m.Push.Channels.Extend(ctx, renewed); err != nil {
				m.log().Warn("shop calendars: record a renewed push channel", "tenant", tenant, "resource", resource, "err", err)
			}
			observePush(tenant, resource, renewed.Expires)
			return
		}
	}
	ch, err := w.Watch(ctx, newChannel(tenant, resource, provider, calendar), m.Push.URL+pushRoute(provider), ttl)
	if err != nil {
		m.setFailed(tenant, resource, now)
		observePush(tenant, resource, time.Time{})
		m.log().Warn("shop calendars: open a push channel; polling only", "tenant", tenant, "resource", resource, "err", err)
		return
	}
	observePush(tenant, resource, ch.Expires)
	old, replaced, err := m.Push.Channels.Replace(ctx, ch)
	if err != nil {
		old, replaced = ch, true // unknown to the gateway: close it
	}
	if replaced && old.Provider == provider && old.Calendar == calendar {
		if serr := w.Stop(ctx, old); serr != nil {
			m.log().Warn("shop calendars: stop a replaced push channel; it runs out by itself", "tenant", tenant, "resource", resource, "err", serr)
		}
	}
	if err != nil {
		m.log().Warn("shop calendars: push channel", "tenant", tenant, "resource", resource, "err", err)
	}
}

func (m *Mirror) failedRecently(tenant, resource string, now time.Time) bool {
	m.push.mu.Lock()
	defer m.push.mu.Unlock()
	return now.Before(m.push.failed[tenant+"\x00"+resource])
}

func (m *Mirror) setFailed(tenant, resource string, now time.Time) {
	m.push.mu.Lock()
	defer m.push.mu.Unlock()
	if m.push.failed == nil {
		m.push.failed = map[string]time.Time{}
	}
	m.push.failed[tenant+"\x00"+resource] = now.Add(watchRetry)
}

// listen reads a resource's calendar again whenever the gateway was
// notified that it changed, until ctx ends; a lost connection is
// listened on again. ready is closed once it first listens.
func (m *Mirror) listen(ctx context.Context, ready chan<- struct{}) {
	wait := time.Second
	var once sync.Once
	for ctx.Err() == nil {
		err := m.Push.Channels.Listen(ctx, func() { once.Do(func() { close(ready) }) },
			func(tenant, resource string) { m.poke(ctx, tenant, resource) })
		if ctx.Err() != nil {
			return
		}
		m.log().Warn("shop calendars: listening for push notifications", "err", err, "again_in", wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// poke refreshes a resource's calendar from now to the horizon; pokes
// that arrive while one runs make one more refresh after it, not one
// each (a burst of changes costs two reads).
func (m *Mirror) poke(ctx context.Context, tenant, resource string) {
	key := tenant + "\x00" + resource
	m.push.mu.Lock()
	defer m.push.mu.Unlock()
	if m.push.running == nil {
		m.push.running, m.push.again = map[string]bool{}, map[string]bool{}
	}
	if m.push.running[key] {
		m.push.again[key] = true
		return
	}
	m.push.running[key] = true
	go func() {
		for {
			from := m.now().Truncate(time.Minute)
			rctx, cancel := context.WithTimeout(ctx, readTimeout)
			if err := m.Refresh(rctx, tenant, resource, from, from.Add(m.horizon())); err != nil && ctx.Err() == nil {
				m.log().Warn("shop calendars: refresh on a push notification", "tenant", tenant, "resource", resource, "err", err)
			}
			cancel()
			m.push.mu.Lock()
			if !m.push.again[key] {
				delete(m.push.running, key)
				m.push.mu.Unlock()
				return
			}
			delete(m.push.again, key)
			m.push.mu.Unlock()
		}
	}()
}
