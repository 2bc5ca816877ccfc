package stack

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
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

// ReadVersions reads the versions of deployment and the open workflows of
// namespace. A deployment no worker has joined yet has no builds.
func ReadVersions(ctx context.Context, c client.Client, namespace, deployment string) (Versions, error) {
	v := Versions{Deployment: deployment, Changes: map[string]int{}}
	d, err := c.WorkerDeploymentClient().GetHandle(deployment).Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
	case err != nil:
		return Versions{}, fmt.Errorf("describe deployment %s: %w", deployment, err)
	default:
		v.Builds = builds(d.Info)
	}
	open := map[OpenCount]int{}
	var token []byte
	for {
		page, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace, Query: "ExecutionStatus = 'Running'", PageSize: 1000, NextPageToken: token,
		})
		if err != nil {
			return Versions{}, fmt.Errorf("list open workflows: %w", err)
		}
		for _, e := range page.GetExecutions() {
			fields := e.GetSearchAttributes().GetIndexedFields()
			var version, behavior string
			var changes []string
			decode(fields, saDeploymentVersion, &version)
			decode(fields, saBehavior, &behavior)
			decode(fields, saChangeVersion, &changes)
			open[OpenCount{BuildID: buildOf(version, deployment), Type: e.GetType().GetName(), Behavior: behavior}]++
			for _, ch := range changes {
				v.Changes[ch]++
			}
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	for k, n := range open {
		k.Count = n
		v.Open = append(v.Open, k)
	}
	sort.Slice(v.Open, func(i, j int) bool {
		a, b := v.Open[i], v.Open[j]
		return a.BuildID+"\x00"+a.Type+"\x00"+a.Behavior < b.BuildID+"\x00"+b.Type+"\x00"+b.Behavior
	})
	return v, nil
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

// buildOf is the build ID in a TemporalWorkerDeploymentVersion value
// ("deployment:build"); a workflow of another deployment shows whole.
func buildOf(version, deployment string) string {
	for _, sep := range []string{":", "."} {
		if b, ok := strings.CutPrefix(version, deployment+sep); ok {
			return b
		}
	}
	return version
}

// decode reads one search attribute; a missing or unreadable one stays
// zero (a workflow that never recorded it).
func decode(fields map[string]*commonpb.Payload, name string, into any) {
	if p, ok := fields[name]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, into)
	}
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
	return fmt.Sprintf("ExecutionStatus = 'Running' AND %s = '%s:%s' AND %s = 'Pinned'", saDeploymentVersion, deployment, build, saBehavior), nil
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
