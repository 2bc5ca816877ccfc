package tenants

import (
	"fmt"
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bookonce/bookonce/shopcal"
)

// ShopCalendar is the shop's own calendar of a resource (package shopcal,
// docs/calendars.md): bookonce writes each booking of the resource there,
// where staff see it, and what staff enter there blocks the slot. A
// CalDAV collection or a Google calendar. The credential is never in the
// file: Secret names it in the workers' SHOP_CALENDAR_SECRETS (CalDAV:
// the user's password; Google: the shop's OAuth refresh token).
//
//	calendar:
//	  caldav: https://dav.example.com/werkstatt/bay-1/
//	  username: werkstatt
//	  secret: werkstatt-dav
//
//	calendar:
//	  google: werkstatt-bay1@group.calendar.google.com
//	  secret: werkstatt-google
type ShopCalendar struct {
	CalDAV   string `json:"caldav,omitempty"`
	Google   string `json:"google,omitempty"`
	Username string `json:"username,omitempty"`
	Secret   string `json:"secret,omitempty"`
}

// shopCalendar reads a resource's "calendar: {caldav | google, username,
// secret}".
func (r *reader) shopCalendar(n *yaml.Node, path string) *ShopCalendar {
	m := r.mapping(n, path, "caldav", "google", "username", "secret")
	var c ShopCalendar
	c.CalDAV, _ = r.str(m["caldav"], join(path, "caldav"))
	c.Google, _ = r.str(m["google"], join(path, "google"))
	c.Username, _ = r.str(m["username"], join(path, "username"))
	c.Secret, _ = r.str(m["secret"], join(path, "secret"))
	return &c
}

// shopCalendar checks the calendar's address and secret reference.
func (v *validator) shopCalendar(p string, c *ShopCalendar) {
	if c == nil {
		return
	}
	switch {
	case c.CalDAV == "" && c.Google == "":
		v.fail(join(p, "caldav"), "a calendar needs caldav (a CalDAV collection's URL) or google (a Google calendar's ID)")
	case c.CalDAV != "" && c.Google != "":
		v.fail(join(p, "google"), "a resource has one calendar: caldav or google, not both")
	case c.CalDAV != "":
		if err := checkCalendarURL(c.CalDAV); err != nil {
			v.fail(join(p, "caldav"), "%v", err)
		}
		if c.Secret != "" && c.Username == "" {
			v.fail(join(p, "username"), "is needed with a secret: the password is sent with a user name")
		}
	default:
		if strings.ContainsAny(c.Google, " /\t\n") || len(c.Google) > 1024 {
			v.fail(join(p, "google"), "must be the Google calendar's ID, e.g. werkstatt@group.calendar.google.com (Settings, Integrate calendar)")
		}
		if c.Secret == "" {
			v.fail(join(p, "secret"), "is needed: it names the shop's Google refresh token in SHOP_CALENDAR_SECRETS")
		}
		if c.Username != "" {
			v.fail(join(p, "username"), "is not used with google: the refresh token says who consented")
		}
	}
	if c.Secret != "" && !shopcal.ValidSecretName(c.Secret) {
		v.fail(join(p, "secret"), "must name a secret of SHOP_CALENDAR_SECRETS (lower-case letters, digits, '-' and '_'), not hold a password: got %d characters", len(c.Secret))
	}
}

// checkCalendarURL refuses a calendar URL that is not an https collection
// (http only on loopback, for a server on the same host).
func checkCalendarURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("must be the calendar collection's URL, e.g. https://dav.example.com/werkstatt/bay-1/, got %q", raw)
	}
	if u.User != nil {
		return fmt.Errorf("must not carry credentials: give username and secret instead")
	}
	loopback := u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1"
	if u.Scheme != "https" && (u.Scheme != "http" || !loopback) {
		return fmt.Errorf("must be https (http only for a server on this host), got %q", u.Scheme+"://"+u.Host)
	}
	if !strings.HasSuffix(u.Path, "/") {
		return fmt.Errorf("must end with / (it names a collection), got %q", raw)
	}
	return nil
}

// sameShopCalendar reports whether two resources' calendars are the same.
func sameShopCalendar(a, b *ShopCalendar) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// String shows the calendar in apply's changes (no secret, only its name).
func (c *ShopCalendar) String() string {
	if c == nil {
		return "none"
	}
	if c.Google != "" {
		return "google " + c.Google
	}
	return "caldav " + c.CalDAV
}
