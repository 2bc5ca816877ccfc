package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// TestUsage: the command lines that never reach Temporal. Help goes to
// stdout with status 0; a usage error says what is wrong, with the usage,
// on stderr, status 2.
func TestUsage(t *testing.T) {
	cases := []struct {
		name       string
		args       []string
		code       int
		stdoutPart string
		stderrPart string
	}{
		{"no command", nil, exitUsage, "", "usage: starter <command>"},
		{"-h", []string{"-h"}, exitOK, "usage: starter <command>", ""},
		{"--help", []string{"--help"}, exitOK, "usage: starter <command>", ""},
		{"help", []string{"help"}, exitOK, "usage: starter <command>", ""},
		{"book -h", []string{"book", "-h"}, exitOK, "usage: starter book --customer", ""},
		{"book --help", []string{"book", "--help"}, exitOK, "-payment-method", ""},
		{"status -h", []string{"status", "-h"}, exitOK, "usage: starter status <workflow-id>", ""},
		{"simulate -h", []string{"simulate", "-h"}, exitOK, "usage: starter simulate --from", ""},
		{"review -h", []string{"review", "-h"}, exitOK, "usage: starter review list | resolve", ""},
		{"unknown command", []string{"bok"}, exitUsage, "", `unknown command "bok"`},
		{"book: unknown flag", []string{"book", "--cusomer", "+4915112345678"}, exitUsage, "", "flag provided but not defined: -cusomer"},
		{"book: missing flags", []string{"book", "--customer", "+4915112345678"}, exitUsage, "", "missing --service, --start"},
		{"book: bad start", []string{"book", "--customer", "+4915112345678", "--service", "tire-change", "--start", "tomorrow"},
			exitUsage, "", `--start "tomorrow": use RFC 3339`},
		{"book: bad number", []string{"book", "--customer", "12", "--service", "tire-change", "--start", "next"},
			exitUsage, "", "not a valid phone number"},
		{"book: argument", []string{"book", "--customer", "+4915112345678", "--service", "tire-change", "--start", "next", "now"},
			exitUsage, "", `unexpected argument "now"`},
		{"status: no workflow ID", []string{"status"}, exitUsage, "", "want exactly one workflow ID"},
		{"cancel -h", []string{"cancel", "-h"}, exitOK, "usage: starter cancel [--reason TEXT]", ""},
		{"cancel: no workflow ID", []string{"cancel"}, exitUsage, "", "want exactly one workflow ID"},
		{"cancel: not an appointment", []string{"cancel", "booking:x"}, exitUsage, "", `"booking:x" is not an appointment's workflow ID`},
		{"reschedule -h", []string{"reschedule", "-h"}, exitOK, "usage: starter reschedule --start", ""},
		{"reschedule: no start", []string{"reschedule", "appointment:demo:x"}, exitUsage, "", "--start is required"},
		{"reschedule: bad start", []string{"reschedule", "--start", "Thursday 10", "appointment:demo:x"}, exitUsage, "", `--start "Thursday 10": use RFC 3339`},
		{"reschedule: not an appointment", []string{"reschedule", "--start", "next", "booking:x"}, exitUsage, "", `"booking:x" is not an appointment's workflow ID`},
		{"simulate: missing text", []string{"simulate", "--from", "+4915112345678"}, exitUsage, "", "missing --from or --text"},
		{"simulate: unknown channel", []string{"simulate", "--from", "+49151", "--text", "x", "--channel", "fax"}, exitUsage, "", `--channel "fax"`},
		{"review: unknown action", []string{"review", "close", "rc_1"}, exitUsage, "", `want "list" or "resolve <case-id> <action>"`},
		{"versions -h", []string{"versions", "-h"}, exitOK, "usage: starter versions [current <build-id>]", ""},
		{"versions: unknown verb", []string{"versions", "drop", "v1"}, exitUsage, "", `want no argument, or "current <build-id>"`},
		{"versions: current without build", []string{"versions", "current"}, exitUsage, "", `want no argument, or "current <build-id>"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, tc.code, run(tc.args, &stdout, &stderr), "stderr: %s", stderr.String())
			if tc.stdoutPart != "" {
				require.Contains(t, stdout.String(), tc.stdoutPart)
				require.Empty(t, stderr.String())
				return
			}
			require.Empty(t, stdout.String())
			require.Contains(t, stderr.String(), tc.stderrPart)
			require.Contains(t, stderr.String(), "usage: starter")
		})
	}
}

// TestBookExitStatus runs "starter book --start next" against the real
// stack (in-process Temporal, a worker, the calendar and payment APIs on
// loopback, real PostgreSQL): a booking that ends Confirmed exits 0, one
// that ends otherwise exits 1 and says its status and reason.
func TestBookExitStatus(t *testing.T) {
	cfg := testsupport.Config(t)
	pool := testsupport.Database(t)
	tc := temporaltest.Temporal(t)
	queue := testsupport.TaskQueue(t)
	cfg.CalendarURL = stacktest.CalendarAPI(t, cfg, pool).URL
	cfg.PaymentsURL = stacktest.PaymentsAPI(t, cfg, pool).URL
	testsupport.Worker(t, tc, queue, func(r worker.Registry) {
		stack.Register(r, stack.NewActivities(cfg, pool, testsupport.Tenants(t, pool), tc))
	})
	t.Setenv("TEMPORAL_ADDRESS", temporaltest.HostPort(t))
	t.Setenv("TEMPORAL_TASK_QUEUE", queue)
	t.Setenv("CALENDAR_URL", cfg.CalendarURL)

	cases := []struct {
		name       string
		customer   string
		card       string
		code       int
		stdout     []string
		stderrPart string
	}{
		{"declined card: exit 1 with status and reason", "+4915112340001", "pm_card_chargeDeclined", exitFailed,
			[]string{"next free slot: ", "status    PaymentFailed", "reason    card_declined"}, "ended PaymentFailed: card_declined"},
		{"confirmed: exit 0", "+4915112340002", "pm_card_visa", exitOK,
			[]string{"next free slot: ", "status    Confirmed", "booked    "}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"book", "--customer", c.customer, "--service", "tire-change", "--start", "next", "--payment-method", c.card}, &stdout, &stderr)
			require.Equal(t, c.code, code, "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
			for _, part := range c.stdout {
				require.Contains(t, stdout.String(), part)
			}
			if c.stderrPart != "" {
				require.Contains(t, stderr.String(), c.stderrPart)
			}
		})
	}
}

// A link-mode booking's status shows where and until when to pay.
func TestPrintStateShowsPaymentLink(t *testing.T) {
	var b strings.Builder
	until := time.Date(2026, 12, 1, 13, 32, 0, 0, time.UTC)
	require.NoError(t, printState(&b, "appointment:demo:x", appointment.State{
		Status: workflows.StatusAuthorizing, Payment: deposit.AwaitingPayment,
		PaymentURL: "http://127.0.0.1:8082/pay/cs_test_1", PaymentExpiresAt: until,
	}))
	require.Contains(t, b.String(), "pay at    http://127.0.0.1:8082/pay/cs_test_1\n")
	require.Contains(t, b.String(), "pay until 2026-12-01T13:32:00Z\n")
	require.NotContains(t, b.String(), "lifecycle", "no lifecycle before the booking is confirmed")
}
