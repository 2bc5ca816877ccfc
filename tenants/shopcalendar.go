package tenants

import (
	"fmt"
	"net/url"
	"regexp"
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
//
//	calendar:
//	  microsoft: werkstatt@autohaus.de   # the mailbox
//	  entra_tenant: 7c1e2a4b-…           # the shop's Microsoft Entra tenant ID
//	  calendar_id: AAMkAD…               # a calendar of the mailbox
//
// A Microsoft calendar needs no secret: the shop's administrator grants
// bookonce's app access to the mailbox (admin consent), and bookonce's
// app credentials are the workers' (MICROSOFT_CLIENT_ID, _SECRET).
type ShopCalendar struct {
	CalDAV      string `json:"caldav,omitempty"`
	Google      string `json:"google,omitempty"`
	Microsoft   string `json:"microsoft,omitempty"`
	EntraTenant string `json:"entra_tenant,omitempty"`
	CalendarID  string `json:"calendar_id,omitempty"`
	Username    string `json:"username,omitempty"`
	Secret      string `json:"secret,omitempty"`
}

// shopCalendar reads a resource's "calendar: {caldav | google, username,
// secret}".
func (r *reader) shopCalendar(n *yaml.Node, path string) *ShopCalendar {
	m := r.mapping(n, path, "caldav", "google", "microsoft", "entra_tenant", "calendar_id", "username", "secret")
	var c ShopCalendar
	c.CalDAV, _ = r.str(m["caldav"], join(path, "caldav"))
	c.Google, _ = r.str(m["google"], join(path, "google"))
	c.Microsoft, _ = r.str(m["microsoft"], join(path, "microsoft"))
	c.EntraTenant, _ = r.str(m["entra_tenant"], join(path, "entra_tenant"))
	c.CalendarID, _ = r.str(m["calendar_id"], join(path, "calendar_id"))
	c.Username, _ = r.str(m["username"], join(path, "username"))
	c.Secret, _ = r.str(m["secret"], join(path, "secret"))
	return &c
}

// shopCalendar checks the calendar's address and secret reference.
func (v *validator) shopCalendar(p string, c *ShopCalendar) {
	if c == nil {
		return
	}
	kinds := 0
	for _, k := range []string{c.CalDAV, c.Google, c.Microsoft} {
		if k != "" {
			kinds++
		}
	}
	switch {
	case kinds == 0:
		v.fail(join(p, "caldav"), "a calendar needs caldav (a CalDAV collection's URL), google (a Google calendar's ID) or microsoft (a Microsoft 365 mailbox)")
	case kinds > 1:
		v.fail(join(p, "google"), "a resource has one calendar: caldav, google or microsoft, not two")
	case c.CalDAV != "":
		if err := checkCalendarURL(c.CalDAV); err != nil {
			v.fail(join(p, "caldav"), "%v", err)
		}
		if c.Secret != "" && c.Username == "" {
			v.fail(join(p, "username"), "is needed with a secret: the password is sent with a user name")
		}
	case c.Google != "":
		if strings.ContainsAny(c.Google, " /\t\n") || len(c.Google) > 1024 {
			v.fail(join(p, "google"), "must be the Google calendar's ID, e.g. werkstatt@group.calendar.google.com (Settings, Integrate calendar)")
		}
		if c.Secret == "" {
			v.fail(join(p, "secret"), "is needed: it names the shop's Google refresh token in SHOP_CALENDAR_SECRETS")
		}
		if c.Username != "" {
			v.fail(join(p, "username"), "is not used with google: the refresh token says who consented")
		}
	default:
		v.microsoft(p, c)
	}
	if c.CalDAV != "" || c.Google != "" {
		for _, f := range [][2]string{{"entra_tenant", c.EntraTenant}, {"calendar_id", c.CalendarID}} {
			if f[1] != "" {
				v.fail(join(p, f[0]), "belongs to a microsoft calendar")
			}
		}
	}
	if c.Secret != "" && !shopcal.ValidSecretName(c.Secret) {
		v.fail(join(p, "secret"), "must name a secret of SHOP_CALENDAR_SECRETS (lower-case letters, digits, '-' and '_'), not hold a password: got %d characters", len(c.Secret))
	}
}

// microsoft checks a Microsoft 365 calendar: a mailbox, the shop's Entra
// tenant ID and the calendar's ID; no credential in the file at all.
func (v *validator) microsoft(p string, c *ShopCalendar) {
	if !strings.Contains(c.Microsoft, "@") || strings.ContainsAny(c.Microsoft, " /") {
		v.fail(join(p, "microsoft"), "must be the mailbox whose calendar it is, e.g. werkstatt@autohaus.de")
	}
	if !entraTenantID.MatchString(c.EntraTenant) {
		v.fail(join(p, "entra_tenant"), "must be the shop's Microsoft Entra tenant ID (a GUID: Entra admin center, Overview)")
	}
	if c.CalendarID == "" || strings.ContainsAny(c.CalendarID, " /?#") {
		v.fail(join(p, "calendar_id"), "must be the ID of the mailbox's calendar (GET /users/{mailbox}/calendars lists them)")
	}
	if c.Secret != "" || c.Username != "" {
		v.fail(join(p, "secret"), "is not used with microsoft: the shop's admin consent to bookonce's app grants access")
	}
}

var entraTenantID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

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
	if c.Microsoft != "" {
		return "microsoft " + c.Microsoft + " " + c.CalendarID
	}
	return "caldav " + c.CalDAV
}
