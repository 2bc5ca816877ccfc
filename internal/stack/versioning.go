package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/config"
)

// WorkerOptions are the worker's options: with a build ID, the worker
// joins its Worker Deployment as that version, and each workflow type
// declares at registration whether its runs stay on the build that
// started them (pinned) or move to the current one (auto-upgrade).
func WorkerOptions(cfg config.Config) worker.Options {
	v := cfg.Versioning
	if !v.On() {
		return worker.Options{}
	}
	return worker.Options{DeploymentOptions: worker.DeploymentOptions{
		UseVersioning: true,
		Version:       worker.WorkerDeploymentVersion{DeploymentName: v.Deployment, BuildID: v.BuildID},
	}}
}

// errNotYetPolled: the server learns a version from its workers' polls,
// so right after a worker starts its version may be unknown for a moment.
var errNotYetPolled = errors.New("the version is not registered yet")

// PromoteVersion makes the worker's version the current version of its
// deployment when that version has never been routed to: the first
// worker of a new build promotes it, and new workflows (and, at their
// next task, the auto-upgrade ones) go to it, while the old build keeps
// the pinned runs it started until they end. A restarted worker of a
// build that was current before does not take the traffic back; a
// rollback is a person's decision (starter versions current).
// It reports whether it promoted.
func PromoteVersion(ctx context.Context, c client.Client, namespace string, v config.Versioning) (bool, error) {
	d, err := c.WorkerDeploymentClient().GetHandle(v.Deployment).DescribeVersion(ctx, client.WorkerDeploymentDescribeVersionOptions{BuildID: v.BuildID})
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return false, errNotYetPolled
	}
	if err != nil {
		return false, fmt.Errorf("describe version %s of %s: %w", v.BuildID, v.Deployment, err)
	}
	if !d.Info.RoutingChangedTime.IsZero() || !d.Info.CurrentSinceTime.IsZero() {
		return false, nil
	}
	routed, err := MakeCurrent(ctx, c, namespace, v.Deployment, v.BuildID)
	if err != nil {
		return false, err
	}
	if !routed {
		// Promoted all the same: the server may report the propagation
		// under way for good, and the build is current; a worker that
		// failed here would promote nothing more.
		slog.Warn("the routing to the new build is still reported in progress", "deployment", v.Deployment, "build_id", v.BuildID)
	}
	return true, nil
}

// routingPatience bounds how long a change of the current version waits
// for the routing to reach the task queues.
const routingPatience = 30 * time.Second

// MakeCurrent routes new workflows (and, at their next task, the
// auto-upgrade ones) to build, then waits up to routingPatience until the
// server reports that routing on the task queues: it answers the change
// before its task queues route by it, and until then tasks still go to
// the old build. A Temporal server (v1.32.2) killed while it propagates a
// change reports it in progress for good after its restart (the chaos
// drill found it): routed then stays false, and the build is current all
// the same.
func MakeCurrent(ctx context.Context, c client.Client, namespace, deployment, build string) (routed bool, err error) {
	h := c.WorkerDeploymentClient().GetHandle(deployment)
	if _, err := h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: build}); err != nil {
		return false, fmt.Errorf("make %s the current version of %s: %w", build, deployment, err)
	}
	wait, cancel := context.WithTimeout(ctx, routingPatience)
	defer cancel()
	for {
		// A failed read (the server restarting) is asked again: the
		// build is current whatever the read says.
		_, routed, _ := CurrentBuild(wait, c, namespace, deployment)
		if routed || ctx.Err() != nil {
			return routed, ctx.Err()
		}
		select {
		case <-wait.Done():
			return false, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// promoteOnStart runs PromoteVersion for a versioned worker that is to
// promote its build, retrying while the server has not yet seen it poll.
func promoteOnStart(ctx context.Context, c client.Client, cfg config.Config, log *slog.Logger) error {
	v := cfg.Versioning
	if !v.On() || !v.Promote {
		return nil
	}
	var promoted bool
	err := ensurePatiently(ctx, DialPatience, func(ctx context.Context) error {
		var err error
		promoted, err = PromoteVersion(ctx, c, cfg.TemporalNamespace, v)
		return err
	}, log)
	if err != nil {
		return err
	}
	log.Info("worker version", "deployment", v.Deployment, "build_id", v.BuildID, "promoted", promoted)
	return nil
}
