// Package chaos is a fault-injecting HTTP reverse proxy. It sits in front
// of an upstream API (calendar, payments, a fake Twilio) and, for requests
// matching its rules, delays them, drops or replaces the answer after the
// upstream committed, resets the connection before forwarding, or sends
// the request twice. Tests use it to prove that callers survive the
// failures the failure matrix names; a chaos drill can run it in front of
// a real deployment.
package chaos

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Fault is what happens to a matching request.
type Fault string

// The faults the proxy can inject. The "after commit" faults exist because
// they are the hard case for callers: the side effect happened, but the
// caller cannot know it.
const (
	// Delay waits Rule.Delay before forwarding (slow network, slow upstream).
	Delay Fault = "delay"
	// DropAfterCommit forwards, lets the upstream commit, then closes the
	// client connection without answering (the "response lost" case).
	DropAfterCommit Fault = "drop-after-commit"
	// ErrorAfterCommit forwards, then answers Rule.Status (502/503/504)
	// instead of the upstream answer (a gateway failing on the way back).
	ErrorAfterCommit Fault = "error-after-commit"
	// Reset closes the client connection before forwarding: nothing
	// reaches the upstream.
	Reset Fault = "reset"
	// Duplicate forwards the request twice (same headers and body) and
	// answers with the second answer (a retrying gateway or client).
	Duplicate Fault = "duplicate"
)

// faults lists the known faults, in a stable order for messages.
var faults = []Fault{Delay, DropAfterCommit, ErrorAfterCommit, Reset, Duplicate}

func knownFault(f Fault) bool {
	for _, k := range faults {
		if k == f {
			return true
		}
	}
	return false
}

// Rule selects requests and the fault to inject into them.
type Rule struct {
	// Method and PathPrefix select requests; "" matches any.
	Method, PathPrefix string
	// Fault is injected when the rule fires.
	Fault Fault
	// Probability (0..1) that a matching request fires the rule. The zero
	// value never fires, so a rule is inert until its probability is set
	// on purpose; ParseRule defaults to 1.
	Probability float64
	// Delay is how long the Delay fault waits.
	Delay time.Duration
	// Status is what ErrorAfterCommit answers (default 502).
	Status int
	// Limit caps how often the rule fires (0 = unlimited), so a drill can
	// inject "exactly one lost answer" and still let the retry through.
	Limit int
}

// validate reports the first problem of r; it also fills defaults.
func (r *Rule) validate() error {
	switch {
	case !knownFault(r.Fault):
		return fmt.Errorf("unknown fault %q (known: %s)", r.Fault, faultNames())
	case r.Probability < 0 || r.Probability > 1 || r.Probability != r.Probability:
		return fmt.Errorf("probability %v outside 0..1", r.Probability)
	case r.Limit < 0:
		return fmt.Errorf("limit %d is negative", r.Limit)
	case r.PathPrefix != "" && !strings.HasPrefix(r.PathPrefix, "/"):
		return fmt.Errorf("path prefix %q does not start with /", r.PathPrefix)
	case r.Delay < 0:
		return fmt.Errorf("delay %v is negative", r.Delay)
	case r.Fault == Delay && r.Delay == 0:
		return errors.New("delay fault without a delay")
	}
	if r.Fault == ErrorAfterCommit && r.Status == 0 {
		r.Status = 502
	}
	if r.Status != 0 && (r.Status < 500 || r.Status > 599) {
		return fmt.Errorf("status %d is not a 5xx", r.Status)
	}
	return nil
}

func faultNames() string {
	names := make([]string, len(faults))
	for i, f := range faults {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// ParseRule parses the flag syntax "METHOD PATH [FAULT] [key=value ...]":
//
//	POST /v1/holds drop-after-commit p=0.2 limit=5
//	any /v1/ delay=200ms p=0.5
//	POST /v1/payment_intents error-after-commit status=503 p=0.1
//
// METHOD and PATH may be "any" or "*". Keys are p (probability, default 1:
// a rule written on a command line is meant to fire), limit, status and
// delay; delay=D alone implies the delay fault.
func ParseRule(s string) (Rule, error) {
	fields := strings.Fields(s)
	fail := func(format string, a ...any) (Rule, error) {
		return Rule{}, fmt.Errorf("chaos: rule %q: %s", s, fmt.Sprintf(format, a...))
	}
	if len(fields) < 3 {
		return fail("want \"METHOD PATH FAULT [key=value ...]\"")
	}
	r := Rule{Probability: 1}
	if err := r.setRoute(fields[0], fields[1]); err != nil {
		return fail("%v", err)
	}
	for _, tok := range fields[2:] {
		if err := r.applyToken(tok); err != nil {
			return fail("%v", err)
		}
	}
	if r.Fault == "" {
		return fail("no fault (known: %s)", faultNames())
	}
	if r.Status != 0 && r.Fault != ErrorAfterCommit {
		return fail("status= only applies to %s", ErrorAfterCommit)
	}
	if err := r.validate(); err != nil {
		return fail("%v", err)
	}
	return r, nil
}

// setRoute sets the rule's method and path prefix from the first two
// fields of a rule; "any" or "*" leaves either open.
func (r *Rule) setRoute(method, path string) error {
	if method != "any" && method != "*" {
		if strings.IndexFunc(method, func(c rune) bool { return (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') }) >= 0 {
			return fmt.Errorf("bad method %q", method)
		}
		r.Method = strings.ToUpper(method)
	}
	if path != "any" && path != "*" {
		if !strings.HasPrefix(path, "/") {
			return fmt.Errorf("path %q does not start with /", path)
		}
		r.PathPrefix = path
	}
	return nil
}

// applyToken applies one token after METHOD PATH: a fault name or a
// key=value setting.
func (r *Rule) applyToken(tok string) error {
	key, val, isKV := strings.Cut(tok, "=")
	if !isKV {
		if !knownFault(Fault(tok)) {
			return fmt.Errorf("unknown fault %q (known: %s)", tok, faultNames())
		}
		return r.setFault(Fault(tok))
	}
	var err error
	switch key {
	case "p":
		r.Probability, err = strconv.ParseFloat(val, 64)
	case "limit":
		r.Limit, err = strconv.Atoi(val)
	case "status":
		r.Status, err = strconv.Atoi(val)
	case "delay":
		if r.Delay, err = time.ParseDuration(val); err == nil {
			err = r.setFault(Delay)
		}
	default:
		return fmt.Errorf("unknown key %q (known: p, limit, status, delay)", key)
	}
	if err != nil {
		return fmt.Errorf("bad %s: %w", tok, err)
	}
	return nil
}

// setFault sets the rule's fault; a rule has one, so a second, different
// one is an error.
func (r *Rule) setFault(f Fault) error {
	if r.Fault != "" && r.Fault != f {
		return fmt.Errorf("two faults %q and %q", r.Fault, f)
	}
	r.Fault = f
	return nil
}
