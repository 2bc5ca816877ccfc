package tenants_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/tenants"
)

// withCalendar is the valid file with a calendar block on lift-1.
func withCalendar(block string) string {
	return strings.Replace(valid, "        hours: {mon-fri: 08:00-17:00}\n", "        hours: {mon-fri: 08:00-17:00}\n"+block, 1)
}

// TestShopCalendarIsChecked: a resource's calendar is a CalDAV
// collection URL over https (http on this host only) with a user and the
// name of a secret; a password, credentials in the URL or a URL that is
// not a collection are refused with the line to fix.
func TestShopCalendarIsChecked(t *testing.T) {
	ok := "        calendar: {caldav: \"https://dav.example.com/acme/lift-1/\", username: acme, secret: acme-dav}\n"
	f, err := tenants.Parse("tenants.yaml", []byte(withCalendar(ok)))
	require.NoError(t, err)
	require.Equal(t, &tenants.ShopCalendar{CalDAV: "https://dav.example.com/acme/lift-1/", Username: "acme", Secret: "acme-dav"}, f.Tenants[0].Resources[0].Calendar)

	tests := []struct{ name, block, want string }{
		{"plain http elsewhere", `{caldav: "http://dav.example.com/acme/lift-1/"}`, "resources[0].calendar.caldav: must be https"},
		{"not a collection", `{caldav: "https://dav.example.com/acme/lift-1"}`, "must end with /"},
		{"credentials in the URL", `{caldav: "https://acme:pw@dav.example.com/acme/lift-1/"}`, "must not carry credentials"},
		{"a password for a secret", `{caldav: "https://dav.example.com/a/", username: acme, secret: "Hunter2!"}`, "must name a secret of SHOP_CALENDAR_SECRETS"},
		{"a secret without a user", `{caldav: "https://dav.example.com/a/", secret: acme-dav}`, "calendar.username: is needed with a secret"},
		{"a typo", `{caldav: "https://dav.example.com/a/", user: acme}`, "calendar.user"},
		{"no url", `{username: acme}`, "calendar.caldav: a calendar needs caldav"},
		{"both", `{caldav: "https://dav.example.com/a/", google: a@group.calendar.google.com, secret: g}`, "not two"},
		{"google without its token", `{google: a@group.calendar.google.com}`, "calendar.secret: is needed"},
		{"google with a user", `{google: a@group.calendar.google.com, username: acme, secret: g}`, "calendar.username: is not used with google"},
		{"google a URL", `{google: "https://calendar.google.com/calendar/u/0/r", secret: g}`, "must be the Google calendar's ID"},
		{"microsoft without its tenant", `{microsoft: werkstatt@acme.example, calendar_id: AAMkAD1}`, "calendar.entra_tenant: must be the shop's Microsoft Entra tenant ID"},
		{"microsoft with a secret", `{microsoft: werkstatt@acme.example, entra_tenant: 7c1e2a4b-0000-4000-8000-00000000abcd, calendar_id: AAMkAD1, secret: x}`, "is not used with microsoft"},
		{"microsoft not a mailbox", `{microsoft: werkstatt, entra_tenant: 7c1e2a4b-0000-4000-8000-00000000abcd, calendar_id: AAMkAD1}`, "must be the mailbox"},
		{"a tenant without microsoft", `{google: a@group.calendar.google.com, secret: g, entra_tenant: x}`, "calendar.entra_tenant: belongs to a microsoft calendar"},
		{"google a token for a secret", `{google: a@group.calendar.google.com, secret: "1//Hunter2xyz"}`, "must name a secret"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tenants.Parse("tenants.yaml", []byte(withCalendar("        calendar: "+tc.block+"\n")))
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "Hunter2", "a password is never echoed")
		})
	}
	_, err = tenants.Parse("tenants.yaml", []byte(withCalendar("        calendar: {caldav: \"http://127.0.0.1:5232/acme/lift-1/\"}\n")))
	require.NoError(t, err, "http to a server on this host")
	f, err = tenants.Parse("tenants.yaml", []byte(withCalendar("        calendar: {google: lift-1@group.calendar.google.com, secret: acme-google}\n")))
	require.NoError(t, err)
	require.Equal(t, &tenants.ShopCalendar{Google: "lift-1@group.calendar.google.com", Secret: "acme-google"}, f.Tenants[0].Resources[0].Calendar)
	_, err = tenants.Parse("tenants.yaml", []byte(withCalendar("        calendar: {microsoft: werkstatt@acme.example, entra_tenant: 7c1e2a4b-0000-4000-8000-00000000abcd, calendar_id: AAMkAD1}\n")))
	require.NoError(t, err)
}

// TestShopCalendarIsAppliedAndLoaded: apply stores the calendar with its
// resource, says what changed, and the registry every process reads has
// it; applying the same file again changes nothing.
func TestShopCalendarIsAppliedAndLoaded(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	_, err := tenants.Apply(ctx, pool, mustParse(t, valid), tenants.ApplyOptions{})
	require.NoError(t, err)
	file := withCalendar("        calendar: {caldav: \"https://dav.example.com/acme/lift-1/\", username: acme, secret: acme-dav}\n")
	diff, err := tenants.Apply(ctx, pool, mustParse(t, file), tenants.ApplyOptions{})
	require.NoError(t, err)
	require.Equal(t, "~ resource acme/lift-1: calendar none -> caldav https://dav.example.com/acme/lift-1/\n", diff.String())
	again, err := tenants.Apply(ctx, pool, mustParse(t, file), tenants.ApplyOptions{})
	require.NoError(t, err)
	require.True(t, again.Empty(), again.String())

	reg, err := tenants.LoadRegistry(ctx, pool, nil)
	require.NoError(t, err)
	p, ok := reg.Get("acme")
	require.True(t, ok)
	require.Equal(t, "acme-dav", p.Resources[0].Calendar.Secret)
}

func mustParse(t *testing.T, text string) tenants.File {
	t.Helper()
	f, err := tenants.Parse("tenants.yaml", []byte(text))
	require.NoError(t, err)
	return f
}
