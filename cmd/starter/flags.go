package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// errHelpShown: the command printed its usage because -h asked for it.
var errHelpShown = errors.New("help shown")

// usageError is a command line the command cannot run: an unknown flag, a
// missing or malformed value. It carries the command's usage for the
// message.
type usageError struct {
	cmd   string
	err   error
	usage string
}

func (e *usageError) Error() string { return e.cmd + ": " + e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// flagSet is a subcommand's flags and its synopsis (the arguments after
// the command's name), for its usage.
type flagSet struct {
	*flag.FlagSet
	synopsis string
}

// newFlags returns the flag set of a subcommand. The flag package prints
// nothing itself: parse decides where the usage goes.
func newFlags(name, synopsis string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, synopsis: synopsis}
}

// usage renders the subcommand's synopsis and flags.
func (fs *flagSet) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: starter %s %s\n", fs.Name(), fs.synopsis)
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		b.WriteString("\nflags:\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return b.String()
}

// parse parses args: -h prints the usage to stdout (errHelpShown), a bad
// flag is a usageError. want checks the positional arguments (nil: none).
func parse(fs *flagSet, args []string, stdout io.Writer, want func(rest []string) error) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, fs.usage())
		return errHelpShown
	}
	if err == nil {
		if want == nil {
			want = noArgs
		}
		err = want(fs.Args())
	}
	if err != nil {
		return usageFailure(fs, err)
	}
	return nil
}

// usageFailure wraps err as the usage error of fs's command.
func usageFailure(fs *flagSet, err error) error {
	return &usageError{cmd: fs.Name(), err: err, usage: fs.usage()}
}

func noArgs(rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q", rest[0])
	}
	return nil
}
