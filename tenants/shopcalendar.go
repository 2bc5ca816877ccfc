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
// where staff see it. Only CalDAV so far. The password is never in the
// file: Secret names it in the workers' SHOP_CALENDAR_SECRETS.
//
//	calendar:
//	  caldav: https://dav.example.com/werkstatt/bay-1/
//	  username: werkstatt
//	  secret: werkstatt-dav
type ShopCalendar struct {
	CalDAV   string `json:"caldav"`
	Username string `json:"username,omitempty"`
	Secret   string `json:"secret,omitempty"`
}

// shopCalendar reads a resource's "calendar: {caldav, username, secret}".
func (r *reader) shopCalendar(n *yaml.Node, path string) *ShopCalendar {
	m := r.mapping(n, path, "!caldav", "username", "secret")
	var c ShopCalendar
	c.CalDAV, _ = r.str(m["caldav"], join(path, "caldav"))
	c.Username, _ = r.str(m["username"], join(path, "username"))
	c.Secret, _ = r.str(m["secret"], join(path, "secret"))
	return &c
}

// shopCalendar checks the calendar's URL and secret reference.
func (v *validator) shopCalendar(p string, c *ShopCalendar) {
	if c == nil {
		return
	}
	if err := checkCalendarURL(c.CalDAV); err != nil {
		v.fail(join(p, "caldav"), "%v", err)
	}
	if c.Secret != "" && !shopcal.ValidSecretName(c.Secret) {
		v.fail(join(p, "secret"), "must name a secret of SHOP_CALENDAR_SECRETS (lower-case letters, digits, '-' and '_'), not hold a password: got %d characters", len(c.Secret))
	}
	if c.Secret != "" && c.Username == "" {
		v.fail(join(p, "username"), "is needed with a secret: the password is sent with a user name")
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
	return "caldav " + c.CalDAV
}
