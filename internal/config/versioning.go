package config

import (
	"fmt"
	"strings"
)

// Worker Versioning: a worker that names its build joins a Worker
// Deployment, and Temporal routes each workflow to the build it belongs to
// (docs/deploying.md, "Deploying while bookings wait").
const (
	// WorkerBuildIDVar names the worker's build; unset, the worker is
	// unversioned and takes every task of its queue, as before.
	WorkerBuildIDVar = "WORKER_BUILD_ID"
	// WorkerDeploymentVar names the Worker Deployment the build belongs to.
	WorkerDeploymentVar = "WORKER_DEPLOYMENT"
	// WorkerPromoteVar says whether a worker makes its build the
	// deployment's current version: "new" (only a build never routed to
	// before, so a restarted old build does not take the traffic back) or
	// "never" (a person or a rollout tool promotes it).
	WorkerPromoteVar = "WORKER_PROMOTE"
	// ControllerBuildIDVar and ControllerDeploymentVar are how the
	// Temporal Worker Controller names the version of the pods it runs
	// for each build (deploy/k8s/components/worker-controller). They
	// count when WORKER_BUILD_ID is unset; the controller then decides
	// the routing, so WORKER_PROMOTE defaults to "never".
	ControllerBuildIDVar    = "TEMPORAL_WORKER_BUILD_ID"
	ControllerDeploymentVar = "TEMPORAL_DEPLOYMENT_NAME"
)

// DefaultWorkerDeployment is WORKER_DEPLOYMENT's default.
const DefaultWorkerDeployment = "bookonce"

// maxVersionPart is Temporal's limit on a deployment name and a build ID.
const maxVersionPart = 255

// Versioning is the worker's place in a Worker Deployment.
type Versioning struct {
	// Deployment is the Worker Deployment's name.
	Deployment string
	// BuildID is the worker's build; empty: an unversioned worker.
	BuildID string
	// Promote: the worker makes a build that was never routed to the
	// deployment's current version once it polls.
	Promote bool
}

// On reports whether the worker is versioned.
func (v Versioning) On() bool { return v.BuildID != "" }

// versioning reads the worker's deployment and build.
func (r *reader) versioning(c *Config) {
	v := Versioning{Deployment: r.get(WorkerDeploymentVar, DefaultWorkerDeployment), BuildID: r.get(WorkerBuildIDVar, "")}
	promote := "new"
	cb, cd := r.get(ControllerBuildIDVar, ""), r.get(ControllerDeploymentVar, v.Deployment)
	if v.BuildID == "" && cb != "" {
		v.BuildID, v.Deployment, promote = cb, cd, "never"
	}
	switch p := strings.ToLower(r.get(WorkerPromoteVar, promote)); p {
	case "new":
		v.Promote = true
	case "never":
	default:
		r.fail(fmt.Sprintf("%s must be \"new\" or \"never\", got %q", WorkerPromoteVar, p))
	}
	// The server joins the two into one version string with "." and
	// ":" in some of its APIs, so neither may appear in a name.
	for name, val := range map[string]string{WorkerDeploymentVar: v.Deployment, WorkerBuildIDVar: v.BuildID} {
		if strings.ContainsAny(val, ".:") || len(val) > maxVersionPart {
			r.fail(fmt.Sprintf("%s must be at most %d characters without \".\" or \":\", got %q", name, maxVersionPart, val))
		}
	}
	c.Versioning = v
}
