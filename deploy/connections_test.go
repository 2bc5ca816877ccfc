package deploy

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/postgres"
)

// PostgreSQL's own defaults, and what a budget leaves free: the
// superuser's reserved slots, the one-shot admin containers, a psql.
const (
	pgDefaultMaxConnections = 100
	pgReserved              = 3
	pgHeadroom              = 10
)

// temporalServices is how many pools of each store the temporalio/server
// image opens: frontend, history, matching and worker each build their
// own persistence (go.temporal.io/server/temporal/fx.go).
const temporalServices = 4

// checkConnections: every pool compose's processes may open fits under
// PostgreSQL's max_connections at once. Pools fill under load, not at
// start, so a stack over budget passes every smoke and fails at peak
// with "too many clients already" (issue #49's soak, 20,000 open).
func checkConnections(p *types.Project) (out problems) {
	budget := maxConnections(p, &out) - pgReserved - pgHeadroom
	pools := map[string]int{}
	if s, ok := service(p, "temporal", &out); ok {
		pools["temporal"] = temporalServices * (envInt(s, "SQL_MAX_CONNS", 20, &out) + envInt(s, "SQL_VIS_MAX_CONNS", 10, &out))
	}
	for _, name := range ourServices {
		if s, ok := service(p, name, &out); ok {
			pools[name] = poolOf(envOf(s, "DATABASE_URL"), &out)
		}
	}
	total := 0
	for _, n := range pools {
		total += n
	}
	if total > budget {
		out.addf("pools may open %d connections (%v), over postgres' max_connections less %d reserved and %d headroom (%d)",
			total, pools, pgReserved, pgHeadroom, budget)
	}
	return out
}

// maxConnections reads -c max_connections=N from the postgres service's
// command, PostgreSQL's default when it is not set.
func maxConnections(p *types.Project, out *problems) int {
	s, ok := service(p, "postgres", out)
	if !ok {
		return pgDefaultMaxConnections
	}
	for _, arg := range s.Command {
		if v, found := strings.CutPrefix(arg, "max_connections="); found {
			n, err := strconv.Atoi(v)
			if err != nil {
				out.addf("postgres: max_connections=%q is not a number", v)
			}
			return n
		}
	}
	return pgDefaultMaxConnections
}

// envInt is s's variable k as a number, def when unset.
func envInt(s types.ServiceConfig, k string, def int, out *problems) int {
	v := envOf(s, k)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		out.addf("%s: %s=%q is not a number", s.Name, k, v)
	}
	return n
}

// poolOf is the pool a process opens for dbURL (internal/postgres.Open).
func poolOf(dbURL string, out *problems) int {
	u, err := url.Parse(dbURL)
	if err != nil {
		return postgres.PoolSize // checkWiring reports it
	}
	v := u.Query().Get("pool_max_conns")
	if v == "" {
		return postgres.PoolSize
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		out.addf("DATABASE_URL: pool_max_conns=%q is not a number", v)
	}
	return n
}

// k8sPeakConnections is how many connections the base's pods may hold
// at once against the database the operator provides: each Deployment
// that reads DATABASE_URL at its most replicas (its HPA's maximum) plus
// a rolling update's surge (25 %, rounded up, Kubernetes' default), and
// the migration Job, each with the default pool.
func k8sPeakConnections(m *manifests) (pods int) {
	reads := func(spec corev1.PodSpec) bool {
		return slices.ContainsFunc(spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "DATABASE_URL" })
	}
	for _, d := range m.deployments {
		if !reads(d.Spec.Template.Spec) {
			continue
		}
		most := mostReplicas(m, d)
		pods += most + int(math.Ceil(float64(most)/4))
	}
	for _, j := range m.jobs {
		if reads(j.Spec.Template.Spec) {
			pods++
		}
	}
	return pods * postgres.PoolSize
}

// mostReplicas is d's HPA's maximum, else its replicas (1 when unset).
func mostReplicas(m *manifests, d appsv1.Deployment) int {
	for _, h := range m.hpas {
		if h.Spec.ScaleTargetRef.Name == d.Name {
			return int(h.Spec.MaxReplicas)
		}
	}
	if d.Spec.Replicas != nil {
		return int(*d.Spec.Replicas)
	}
	return 1
}

// TestK8sDatabaseConnectionsDocumented: docs/deploy.md tells the
// operator how many connections their PostgreSQL must allow for the
// base, computed from the manifests, so the figure follows a change of
// an HPA's maximum.
func TestK8sDatabaseConnectionsDocumented(t *testing.T) {
	peak := k8sPeakConnections(mustBuild(t, "base"))
	require.Greater(t, peak, 0)
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docs", "deploy.md"))
	require.NoError(t, err)
	want := fmt.Sprintf("up to **%d connections**", peak)
	require.Truef(t, strings.Contains(string(raw), want),
		"docs/deploy.md, \"Database connections\", must say %q: the base's pods may open that many", want)
}
