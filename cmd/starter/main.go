// Command starter is bookonce's command line: start a booking, show its
// saga step by step, simulate a customer's message, work the review queue.
//
//	starter book --customer +4915112345678 --service tire-change --start next
//	starter status appointment:demo:<intent-id>
//	starter find --customer +4915112345678
//
// Exit codes, so scripts can tell: 0 done (a booking ended Confirmed), 1 a
// booking that ended otherwise or a failure on the way, 2 a usage error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

const usage = `usage: starter <command> [flags]

commands:
  book        start an appointment booking and wait for its outcome
  status      print a booking's saga step table: starter status <workflow-id>
  cancel      cancel a confirmed booking (refund by the tenant's policy): starter cancel <workflow-id>
  reschedule  move a confirmed booking: starter reschedule --start RFC3339|next <workflow-id>
  no-show     mark a booking whose slot has begun as a no-show (deposit kept): starter no-show <workflow-id>
  simulate    post a signed Twilio webhook to the gateway (WhatsApp or voice)
  review      list open review cases, or resolve one: starter review list | resolve <case-id> <action>
  find        list a customer's workflows by phone number: starter find --customer <E.164> [--tenant T]
  consent     show a customer's STOP and START trail and what holds now: starter consent --customer <E.164> [--tenant T]
  tenants     apply a tenants file, list the tenants, mint an API token: starter tenants apply -f FILE [--dry-run] | list | token
  service-key make a key pair for the worker's identity at the calendar and payment APIs
  agent-config print the tools to paste into a voice platform: starter agent-config --platform vapi|retell|elevenlabs --url https://…
  versions    which worker builds and GetVersion changes open workflows still use; starter versions current <build-id> routes to a build

Run "starter <command> -h" for the flags of a command. Configuration comes
from the environment (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, ...; see docs/configuration.md).
Exit status: 0 done, 1 failed (or the booking did not end Confirmed), 2 usage error.
`

// commands are starter's subcommands; each parses its own flags.
var commands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"book":         book,
	"status":       status,
	"cancel":       cancelCmd,
	"no-show":      noShowCmd,
	"simulate":     simulate,
	"review":       reviewCmd,
	"tenants":      tenantsCmd,
	"reschedule":   rescheduleCmd,
	"find":         findCmd,
	"consent":      consentCmd,
	"service-key":  serviceKeyCmd,
	"agent-config": agentConfigCmd,
	"versions":     versionsCmd,
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is starter without the process around it: the exit code, with what
// is asked for on stdout and diagnostics on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "starter: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	return exitCode(cmd(args[1:], stdout, stderr), stderr)
}

// reported is the exit status of a command that has already told the
// user what went wrong.
type reported int

func (r reported) Error() string { return fmt.Sprintf("exit status %d", int(r)) }

// exitCode reports err on stderr and maps it to the exit code.
func exitCode(err error, stderr io.Writer) int {
	var (
		ue   *usageError
		code reported
	)
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return exitOK
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "starter %s: %v\n\n%s", ue.cmd, ue.err, ue.usage)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "starter:", err)
		return exitFailed
	}
}
