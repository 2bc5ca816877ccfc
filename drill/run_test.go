package drill

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDrill100 is the small acceptance drill of `make test`: 100 bookings
// through signed webhooks on both channels with redeliveries, rephrasings
// and genuine second bookings, customers racing for one slot, AI agents
// calling the booking tool again, in parallel and in other words, faults in
// front of every downstream API (a bare 503 after Twilio accepted a
// message among them), worker processes SIGKILLed mid-flight, API
// processes SIGKILLed and restarted, a new worker build deployed while
// the old one finishes the sagas pinned to it, PostgreSQL crashed
// (immediate shutdown) and restarted, and the Temporal server process SIGKILLed and
// restarted. It must end with zero duplicate effects (counted across
// references and over every message at Twilio), zero losses, zero false
// merges, zero double-booked resources, alternatives for every loser,
// zero orphans and at most 0.5 % of bookings needing a person. The long
// outage (longer than a step retries) is left to `make chaos`: it alone
// would take longer than this whole test.
func TestDrill100(t *testing.T) {
	if testing.Short() {
		t.Skip("the drill runs the whole stack; -short skips it")
	}
	// BOOKONCE_DRILL_LOGS keeps the processes' logs and the Temporal file
	// (a failing run is read there); a temp dir otherwise.
	dir := os.Getenv("BOOKONCE_DRILL_LOGS")
	if dir == "" {
		dir = t.TempDir()
	}
	r, err := Run(t.Context(), Options{
		Bookings: 100, Concurrency: 16, KillEvery: 8 * time.Second, Seed: 100,
		LogDir: dir, Progress: testWriter{t}, SettleTimeout: 6 * time.Minute, // generous: CI runs other packages beside it
		OrphanWait: 45 * time.Second,
		Crashes: &Crashes{APIKillEvery: 7 * time.Second, RestartPostgres: true, RestartTemporal: true, ProviderOutage: 15 * time.Second,
			After: 3 * time.Second, Gap: 4 * time.Second, Deploy: true},
		// Cancels and moves by message, as customers send them.
		Changes: ChangesChat, CancelShare: 15, RescheduleShare: 15,
		// Enough of the few one-message WhatsApp customers of a small run.
		StaleWindowShare: 30, StopShare: 20,
	})
	require.NoError(t, err)
	out, err := json.MarshalIndent(r, "", "  ")
	require.NoError(t, err)
	t.Logf("report:\n%s\n%s", out, r.Summary())
	if !r.Passed {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s (tail):\n%s", l, b)
		}
	}
	require.True(t, r.Passed, "drill failed: %v", r.Failures)
	require.Equal(t, 100, r.Bookings)
	require.Zero(t, r.Duplicates)
	require.Zero(t, r.Outcomes.Lost)
	require.Positive(t, r.WorkerKills, "a worker process was killed mid-drill")
	require.NotNil(t, r.Deploy, "a new worker build was deployed mid-drill")
	// Sagas were in flight on the old build when the new one started; that
	// the old build then finishes them after the switch is asserted
	// without a race in TestDeployWhileBookingsWait (package workflows):
	// here a Temporal restart can delay the switch past the last saga.
	require.Positive(t, r.Deploy.PinnedAtStart, "sagas were pinned to the old build when the new one started")
	require.Positive(t, r.Deploy.OldStopped, "the old build's workers stopped once drained")
	require.Positive(t, r.Deploy.Changed, "lifecycles ran the new build's workflow change")
	require.Zero(t, r.NonDeterminism)
	require.Positive(t, r.UnknownOutcomes.Total, "faults after commit were injected")
	require.Positive(t, r.Blocked["inbox"], "redeliveries were blocked at the inbox")
	require.Positive(t, r.Genuine.Scenarios)
	require.Zero(t, r.Genuine.Merged)
	require.Equal(t, 1.0, r.ResultIDs.Share)
	require.Positive(t, r.Contention.Slots, "customers raced for a slot")
	require.Positive(t, r.Contention.Lost, "a contended slot had losers")
	require.Positive(t, r.Traffic.StaleWindows, "customers wrote more than a day before their messages")
	require.Positive(t, r.Templates, "messages outside the window left as approved templates")
	require.Empty(t, r.ProviderRefused, "no message refused by the provider's rules")
	require.Positive(t, r.OptOuts.Customers, "customers wrote STOP")
	require.Equal(t, r.OptOuts.Customers, r.OptOuts.Recorded, "every STOP recorded")
	require.Zero(t, r.OptOuts.ToOptedOut, "no reminder after a STOP")
	require.Positive(t, r.Senders.Messages[secondShop], "the second shop's customers were answered")
	require.Zero(t, r.Senders.Wrong, "no message from another shop's number")
	require.Zero(t, r.ShopCalendars.Total(), "every booking once in its shop's calendar: %v", r.ShopCalendars.Examples)
	for _, p := range []string{providerCalDAV, providerGoogle, providerMicrosoft} {
		require.Positive(t, r.ShopCalendars.Events[p], "bookings in the %s calendars", p)
	}
	require.Positive(t, r.ShopCalendars.StaffEntered, "staff entered appointments in the shops' calendars")
	require.Zero(t, r.ShopCalendars.OverBusy, "no booking over an appointment staff entered before its hold")
	require.Equal(t, r.Contention.Lost, r.Contention.Offered, "every loser was offered alternatives")
	require.Zero(t, r.DoubleBooked.Resources)
	require.Zero(t, r.DoubleBooked.NotBooked)
	require.LessOrEqual(t, r.Operator.Share, r.Operator.Limit)
	kinds := map[string]int{}
	for _, c := range r.Crashes {
		require.Empty(t, c.Error, "%s of %s came back", c.Kind, c.Target)
		kinds[c.Kind]++
	}
	require.Positive(t, kinds["api_kill"], "an API process was SIGKILLed mid-drill")
	require.Equal(t, 1, kinds["postgres_restart"])
	require.Equal(t, 1, kinds["temporal_restart"])
	require.Equal(t, 1, kinds["provider_outage"], "the shops' calendars were unreachable for a while")
	require.Zero(t, r.Orphans.Total(), "orphaned effects: %v", r.Orphans.Examples)
	// AI agents booked through the tools, retrying as agents do, and each
	// wish ended in one booking (the duplicate checks above count theirs).
	require.Positive(t, r.Scenarios[Agent], "AI agents booked through the tools")
	require.Greater(t, r.Agent.Calls, r.Scenarios[Agent], "agents called again")
	ended := r.Outcomes.ByKind[Agent]
	require.Equal(t, r.Scenarios[Agent], ended[Confirmed]+ended[Rejected], "every agent's wish ended: %v", ended)
	require.Zero(t, r.Agent.Unanswered)
	require.Zero(t, r.Agent.Diverging)
	learnt := 0
	for _, n := range r.Agent.Learnt {
		learnt += n
	}
	require.Equal(t, r.Scenarios[Agent], learnt, "every agent ended with an answer")
	require.Equal(t, r.Agent.PaymentURLs, r.Agent.AtTwilio, "every payment link answered to an agent reached the customer")
	// Customers cancelled confirmed bookings, some twice at once or
	// again; each cancel took effect once, with its deposit on the
	// window's right side, and every booking was reminded once per offset.
	ch := r.Changes
	require.Positive(t, ch.Sent[Cancel], "customers cancelled")
	require.Positive(t, ch.Duplicated[AcrossChannels]+ch.Duplicated[Redelivered], "some cancels came twice")
	// Every cancel of a confirmed booking took effect once: the plain
	// ones, the rebooks' first step and the early cancels that reached
	// the lifecycle.
	cancelled := ch.Sent[Cancel] + ch.Sent[Rebook] + ch.Checks.Early.AfterConfirmation
	require.Equal(t, cancelled, ch.Checks.Cancelled)
	require.Equal(t, cancelled, ch.Checks.CancellationMessages)
	// Rebooks and cancels during the saga ran, and each ended as it must.
	require.Positive(t, ch.Checks.Rebooks.Sent, "customers booked again after a cancel or a move")
	require.Equal(t, ch.Checks.Rebooks.Sent, ch.Checks.Rebooks.Rebooked)
	require.Positive(t, ch.Sent[CancelEarly], "customers cancelled while the saga ran")
	require.Empty(t, ch.failures())
	for _, off := range drillReminders {
		require.Positive(t, ch.Checks.RemindersByOffset[off.String()], "reminders %s were sent", off)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
