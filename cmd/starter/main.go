// Command starter is bookonce's command line: start a booking, show its
// saga step by step.
//
//	starter book --customer +4915112345678 --service tire-change --start 2026-12-01T14:00:00+01:00
//	starter status appointment:demo:<intent-id>
package main

import (
	"fmt"
	"os"
)

const usage = `usage: starter <command> [flags]

commands:
  book     start an appointment booking and wait for its outcome
  status   print a booking's saga step table: starter status <workflow-id>
  simulate post a signed Twilio webhook to the gateway (WhatsApp or voice)
  review   list open review cases, or resolve one: starter review list | resolve <case-id> <action>
  tenants  apply a tenants file or list the tenants: starter tenants apply -f FILE [--dry-run] | list

Run "starter <command> -h" for the flags of a command. Configuration comes
from the environment (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, ...; see README).
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "book":
		err = book(os.Args[2:])
	case "status":
		err = status(os.Args[2:])
	case "simulate":
		err = simulate(os.Args[2:])
	case "review":
		err = reviewCmd(os.Args[2:])
	case "tenants":
		err = tenantsCmd(os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "starter: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "starter:", err)
		os.Exit(1)
	}
}
