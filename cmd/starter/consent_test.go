package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestStarterConsentShowsTheTrail: the shop sees every STOP and START
// with its message and time, and what holds now; never the number.
func TestStarterConsentShowsTheTrail(t *testing.T) {
	ctx := context.Background()
	store := &consent.Store{Pool: testsupport.Database(t), Keys: customerid.Dev()}
	const number = "+4915112345678"
	var out bytes.Buffer
	require.NoError(t, printConsent(ctx, store, "demo", number, &out))
	require.Contains(t, out.String(), "subscribed: reminders are sent (no STOP on record)")

	at := time.Date(2026, 12, 6, 9, 30, 0, 0, time.UTC)
	for i, a := range []consent.Action{consent.OptOut, consent.OptIn, consent.OptOut} {
		_, err := store.Record(ctx, consent.Change{Tenant: "demo", Customer: number, Action: a, Channel: "whatsapp",
			EventID: "SM" + string(rune('a'+i)), At: at.Add(time.Duration(i) * time.Hour)})
		require.NoError(t, err)
	}
	out.Reset()
	require.NoError(t, printConsent(ctx, store, "demo", number, &out))
	text := out.String()
	require.Contains(t, text, "opted out: no reminders since 2026-12-06T11:30:00Z")
	require.Contains(t, text, "2026-12-06T09:30:00Z  opt_out  whatsapp  SMa")
	require.Contains(t, text, "2026-12-06T10:30:00Z  opt_in   whatsapp  SMb")
	require.NotContains(t, text, number)
}
