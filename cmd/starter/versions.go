package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
)

// versionsCmd shows what the open workflows still need of the worker
// builds, or makes a build the deployment's current version.
func versionsCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("versions", "[current <build-id>]")
	deployment := fs.String("deployment", "", "the Worker Deployment (default: WORKER_DEPLOYMENT, else bookonce)")
	if err := parse(fs, args, stdout, func(rest []string) error {
		if len(rest) == 0 || len(rest) == 2 && rest[0] == "current" && rest[1] != "" {
			return nil
		}
		return errors.New(`want no argument, or "current <build-id>"`)
	}); err != nil {
		return err
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	if *deployment == "" {
		*deployment = cfg.Versioning.Deployment
	}
	ctx, stop := stack.SignalContext()
	defer stop()
	tc, err := dialTemporal(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer tc.Close()
	if fs.Arg(0) == "current" {
		return setCurrent(ctx, tc, cfg.TemporalNamespace, *deployment, fs.Arg(1), stdout)
	}
	v, err := stack.ReadVersions(ctx, tc, cfg.TemporalNamespace, *deployment)
	if err != nil {
		return err
	}
	return printVersions(stdout, v)
}

// setCurrent routes new workflows, and the auto-upgrade ones at their next
// task, to build: a promotion the worker did not make, or a rollback.
func setCurrent(ctx context.Context, tc client.Client, namespace, deployment, build string, stdout io.Writer) error {
	routed, err := stack.MakeCurrent(ctx, tc, namespace, deployment, build)
	if err != nil {
		return err
	}
	if !routed {
		fmt.Fprintf(stdout, "%s is the current version of %s; the server still reports its routing to the task queues in progress\n", build, deployment)
		return nil
	}
	fmt.Fprintf(stdout, "%s is the current version of %s\n", build, deployment)
	return nil
}

// printVersions prints the builds, the open workflows per build and the
// change IDs they recorded, each as its own table.
func printVersions(w io.Writer, v stack.Versions) error {
	fmt.Fprintf(w, "deployment %s\n\n", v.Deployment)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUILD\tSTATUS\tCREATED")
	for _, b := range v.Builds {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.BuildID, b.Status, b.Created.UTC().Format(time.RFC3339))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(v.Builds) == 0 {
		fmt.Fprintln(w, "(none: no versioned worker has polled; set WORKER_BUILD_ID)")
	}
	fmt.Fprintln(tw, "\nOPEN ON BUILD\tWORKFLOW TYPE\tBEHAVIOR\tCOUNT")
	for _, o := range v.Open {
		build, behavior := o.BuildID, o.Behavior
		if build == "" {
			build = "(unversioned)"
		}
		if behavior == "" {
			behavior = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", build, o.Type, behavior, o.Count)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	changes := make([]string, 0, len(v.Changes))
	for ch := range v.Changes {
		changes = append(changes, ch)
	}
	sort.Strings(changes)
	fmt.Fprintln(tw, "\nCHANGE ID-VERSION\tOPEN WORKFLOWS")
	for _, ch := range changes {
		fmt.Fprintf(tw, "%s\t%d\n", ch, v.Changes[ch])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(changes) == 0 {
		fmt.Fprintln(w, "(none: no open workflow recorded a change the code knows)")
	}
	return nil
}
