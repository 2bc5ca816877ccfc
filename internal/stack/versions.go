package stack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
	"golang.org/x/sync/errgroup"

	"github.com/bookonce/bookonce/internal/deploychange"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/lifecycle"
	"github.com/bookonce/bookonce/workflows/reconciler"
)

// Versions is what the open workflows still need of the worker builds:
// the deployment's versions with their routing, and the open workflows
// by build and by change ID. An old build (and an old GetVersion branch)
// may go once nothing open uses it.
type Versions struct {
	Deployment string
	// Builds are the deployment's versions, newest first.
	Builds []Build
	// Open counts the open workflows by build ("" unversioned), type and
	// versioning behavior.
	Open []OpenCount
	// Changes counts the open workflows by the GetVersion change IDs
	// they recorded ("change-id-version", Temporal's TemporalChangeVersion).
	Changes map[string]int
}

// Build is one version of the deployment.
type Build struct {
	BuildID string
	// Status is current, ramping, draining, drained or inactive.
	Status  string
	Created time.Time
}

// OpenCount is a number of open workflows of one build, type and behavior.
type OpenCount struct {
	BuildID, Type, Behavior string
	Count                   int
}

// Search attributes the server and the SDK keep on every workflow.
const (
	saDeploymentVersion = "TemporalWorkerDeploymentVersion"
	saBehavior          = "TemporalWorkflowVersioningBehavior"
	saChangeVersion     = "TemporalChangeVersion"
)

// The values of TemporalWorkflowVersioningBehavior ("" when unversioned).
const (
	behaviorPinned      = "Pinned"
	behaviorAutoUpgrade = "AutoUpgrade"
)

// Other stands for the open workflows of a build or type the code does not
// know (another deployment's, a type it no longer registers).
const Other = "(other)"

// ReadVersions reads the versions of deployment and counts the open
// workflows of namespace by build, type and behavior, and by the change
// IDs of workflows.Changes (and the deploy rehearsal's). It counts rather
// than lists: a listing of every open workflow took more than ten seconds
// a page on the SQLite server at 20,000 open. A deployment no worker has
// joined yet has no builds.
func ReadVersions(ctx context.Context, c client.Client, namespace, deployment string) (Versions, error) {
	v := Versions{Deployment: deployment}
	d, err := c.WorkerDeploymentClient().GetHandle(deployment).Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
	case err != nil:
		return Versions{}, fmt.Errorf("describe deployment %s: %w", deployment, err)
	default:
		v.Builds = builds(d.Info)
	}
	count := counter{c: c, namespace: namespace}
	if v.Open, err = count.open(ctx, deployment, v.Builds); err != nil {
		return Versions{}, err
	}
	if v.Changes, err = count.changes(ctx); err != nil {
		return Versions{}, err
	}
	return v, nil
}

// workflowTypes are the types the worker registers, each with the
// versioning behavior it registers them with.
var workflowTypes = []struct{ name, behavior string }{
	{conversation.WorkflowName, behaviorAutoUpgrade}, {appointment.WorkflowName, behaviorPinned}, {deposit.WorkflowName, behaviorPinned},
	{lifecycle.WorkflowName, behaviorAutoUpgrade}, {reconciler.WorkflowName, behaviorPinned},
}

// counter counts open workflows of a namespace by visibility queries.
type counter struct {
	c         client.Client
	namespace string
}

// count is the number of open workflows that match where.
func (k counter) count(ctx context.Context, where string) (int, error) {
	q := "ExecutionStatus = 'Running'"
	if where != "" {
		q += " AND " + where
	}
	r, err := k.c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: k.namespace, Query: q})
	if err != nil {
		return 0, fmt.Errorf("count open workflows (%s): %w", q, err)
	}
	return int(r.GetCount()), nil
}

// open counts the open workflows by build (each of builds, unversioned,
// Other), then the builds that have some by type, then those pairs by
// behavior, the type's own first: a few dozen counts, whatever the
// number of open workflows.
func (k counter) open(ctx context.Context, deployment string, builds []Build) ([]OpenCount, error) {
	total, err := k.count(ctx, "")
	if err != nil {
		return nil, err
	}
	parts := []slice{{where: saDeploymentVersion + " IS NULL"}}
	for _, b := range builds {
		parts = append(parts, slice{build: b.BuildID, where: onBuild(deployment, b.BuildID)})
	}
	var out []OpenCount
	for _, s := range parts {
		n, err := k.count(ctx, s.where)
		if err != nil {
			return nil, err
		}
		total -= n
		if n > 0 {
			rows, err := k.byType(ctx, s, n)
			if err != nil {
				return nil, err
			}
			out = append(out, rows...)
		}
	}
	if total > 0 { // builds of another deployment, or gone from this one
		out = append(out, OpenCount{BuildID: Other, Type: Other, Count: total})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.BuildID+"\x00"+a.Type+"\x00"+a.Behavior < b.BuildID+"\x00"+b.Type+"\x00"+b.Behavior
	})
	return out, nil
}

// slice is the open workflows of one build ("" unversioned).
type slice struct{ build, where string }

// byType splits the n open workflows of s by type and behavior.
func (k counter) byType(ctx context.Context, s slice, n int) ([]OpenCount, error) {
	var out []OpenCount
	for _, wt := range workflowTypes {
		typed := fmt.Sprintf("%s AND WorkflowType = %s", s.where, quote(wt.name))
		m, err := k.count(ctx, typed)
		if err != nil {
			return nil, err
		}
		n -= m
		first := wt.behavior
		if s.build == "" {
			first = "" // an unversioned worker's workflows have none
		}
		for _, behavior := range behaviorsFrom(first) {
			if m == 0 {
				break
			}
			where := typed + " AND " + saBehavior + " IS NULL"
			if behavior != "" {
				where = fmt.Sprintf("%s AND %s = %s", typed, saBehavior, quote(behavior))
			}
			b, err := k.count(ctx, where)
			if err != nil {
				return nil, err
			}
			if b > 0 {
				out = append(out, OpenCount{BuildID: s.build, Type: wt.name, Behavior: behavior, Count: b})
				m -= b
			}
		}
	}
	if n > 0 {
		out = append(out, OpenCount{BuildID: s.build, Type: Other, Count: n})
	}
	return out, nil
}

// behaviorsFrom is the versioning behaviors ("" for none), first the one
// a type registers with: its workflows have it unless overridden.
func behaviorsFrom(first string) []string {
	out := []string{first}
	for _, b := range []string{behaviorPinned, behaviorAutoUpgrade, ""} {
		if b != first {
			out = append(out, b)
		}
	}
	return out
}

// changes counts the open workflows that recorded each version of each
// change the code knows, four counts at a time; changes no open workflow
// recorded are left out.
func (k counter) changes(ctx context.Context) (map[string]int, error) {
	var markers []string
	for _, ch := range append(slices.Clone(workflows.Changes), workflows.Change{ID: deploychange.ChangeID, Max: deploychange.Version}) {
		for v := workflow.Version(1); v <= ch.Max; v++ {
			markers = append(markers, fmt.Sprintf("%s-%d", ch.ID, v))
		}
	}
	counts := make([]int, len(markers))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, m := range markers {
		g.Go(func() (err error) {
			counts[i], err = k.count(gctx, fmt.Sprintf("%s = %s", saChangeVersion, quote(m)))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for i, m := range markers {
		if counts[i] > 0 {
			out[m] = counts[i]
		}
	}
	return out, nil
}

// quote is s as a string literal of a visibility query.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// builds lists a deployment's versions, newest first, with their status.
func builds(info client.WorkerDeploymentInfo) []Build {
	rc := info.RoutingConfig
	var out []Build
	for _, s := range info.VersionSummaries {
		b := Build{BuildID: s.Version.BuildID, Created: s.CreateTime, Status: "inactive"}
		switch {
		case rc.CurrentVersion != nil && rc.CurrentVersion.BuildID == b.BuildID:
			b.Status = "current"
		case rc.RampingVersion != nil && rc.RampingVersion.BuildID == b.BuildID:
			b.Status = "ramping"
		case s.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDraining:
			b.Status = "draining"
		case s.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDrained:
			b.Status = "drained"
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out
}

// PinnedOpen counts the open workflows pinned to build of deployment: the
// build's workers may stop once it is zero (the auto-upgrade ones move on
// by themselves).
func PinnedOpen(ctx context.Context, c client.Client, deployment, build string) (int64, error) {
	q, err := pinnedQuery(deployment, build)
	if err != nil {
		return 0, err
	}
	r, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: q})
	if err != nil {
		return 0, fmt.Errorf("count the runs pinned to %s: %w", build, err)
	}
	return r.GetCount(), nil
}

// pinnedQuery is the visibility query of the open runs pinned to build.
func pinnedQuery(deployment, build string) (string, error) {
	if strings.ContainsAny(deployment+build, "'\\") {
		return "", fmt.Errorf("deployment %q or build %q holds a quote", deployment, build)
	}
	return fmt.Sprintf("ExecutionStatus = 'Running' AND %s AND %s = %s", onBuild(deployment, build), saBehavior, quote(behaviorPinned)), nil
}

// onBuild is the visibility clause of the workflows whose last task ran
// on build of deployment ("deployment:build").
func onBuild(deployment, build string) string {
	return fmt.Sprintf("%s = %s", saDeploymentVersion, quote(deployment+":"+build))
}

// CurrentBuild is the deployment's current build, and whether the server
// reports its routing on the task queues (not still in progress).
func CurrentBuild(ctx context.Context, c client.Client, namespace, deployment string) (build string, routed bool, err error) {
	d, err := c.WorkflowService().DescribeWorkerDeployment(ctx, &workflowservice.DescribeWorkerDeploymentRequest{
		Namespace: namespace, DeploymentName: deployment,
	})
	if err != nil {
		return "", false, fmt.Errorf("describe deployment %s: %w", deployment, err)
	}
	info := d.GetWorkerDeploymentInfo()
	return info.GetRoutingConfig().GetCurrentDeploymentVersion().GetBuildId(),
		info.GetRoutingConfigUpdateState() != enumspb.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS, nil
}

// PinnedRuns describes up to limit open runs pinned to build (ID, type,
// the behavior and version the server holds, a pending task): what keeps
// an old build from draining.
func PinnedRuns(ctx context.Context, c client.Client, deployment, build string, limit int) ([]string, error) {
	q, err := pinnedQuery(deployment, build)
	if err != nil {
		return nil, err
	}
	page, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, PageSize: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list the runs pinned to %s: %w", build, err)
	}
	var out []string
	for _, e := range page.GetExecutions() {
		id := e.GetExecution().GetWorkflowId()
		line := fmt.Sprintf("%s (%s)", id, e.GetType().GetName())
		if d, err := c.DescribeWorkflowExecution(ctx, id, e.GetExecution().GetRunId()); err == nil {
			vi := d.GetWorkflowExecutionInfo().GetVersioningInfo()
			line += fmt.Sprintf(" behavior %s on %s override %v, task pending %v, history %d", vi.GetBehavior(), vi.GetDeploymentVersion().GetBuildId(),
				vi.GetVersioningOverride() != nil, d.GetPendingWorkflowTask() != nil, d.GetWorkflowExecutionInfo().GetHistoryLength())
		}
		out = append(out, line)
	}
	return out, nil
}
