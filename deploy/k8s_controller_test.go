package deploy

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// workerDeployment is the Temporal Worker Controller's WorkerDeployment
// (temporal.io/v1alpha1, api/v1alpha1/workerdeployment_types.go), the
// fields this tree may set, so that a misspelt one fails the decoding.
type workerDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Replicas      *int32                 `json:"replicas,omitempty"`
		Template      corev1.PodTemplateSpec `json:"template"`
		WorkerOptions struct {
			ConnectionRef struct {
				Name string `json:"name"`
			} `json:"connectionRef"`
			TemporalNamespace string `json:"temporalNamespace"`
		} `json:"workerOptions"`
		Rollout struct {
			Strategy string `json:"strategy"`
			Steps    []struct {
				RampPercentage int             `json:"rampPercentage"`
				PauseDuration  metav1.Duration `json:"pauseDuration"`
			} `json:"steps,omitempty"`
		} `json:"rollout"`
		Sunset struct {
			ScaledownDelay metav1.Duration `json:"scaledownDelay"`
			DeleteDelay    metav1.Duration `json:"deleteDelay"`
		} `json:"sunset"`
	} `json:"spec"`
}

// connection is the controller's Connection (temporal.io/v1alpha1).
type connection struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		HostPort string `json:"hostPort"`
		TLS      *struct {
			ServerName string `json:"serverName,omitempty"`
		} `json:"tls,omitempty"`
		MutualTLSSecretRef *struct {
			Name string `json:"name"`
		} `json:"mutualTLSSecretRef,omitempty"`
		APIKeySecretRef *corev1.SecretKeySelector `json:"apiKeySecretRef,omitempty"`
	} `json:"spec"`
}

// controlled marks, in manifests.deployments, the Deployment a
// WorkerDeployment makes of its template for each build: every pod check
// covers it, and its replicas are the controller's.
const controlled = "bookonce.test/controlled-by"

// addWorkerDeployment keeps w and the Deployment the controller makes of
// it.
func (m *manifests) addWorkerDeployment(w workerDeployment) {
	m.workerDeployments = append(m.workerDeployments, w)
	d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace, Labels: w.Labels,
		Annotations: map[string]string{controlled: "WorkerDeployment/" + w.Name}}}
	d.Spec.Replicas, d.Spec.Template = w.Spec.Replicas, w.Spec.Template
	m.deployments = append(m.deployments, d)
}

// TestWorkerControllerOverlay: with the controller, the worker's pods are
// exactly own-temporal's worker pods; the controller reaches the same
// Temporal as the worker, with the same certificate; each build runs at
// least two workers, and no autoscaler targets the Deployment that is
// gone.
func TestWorkerControllerOverlay(t *testing.T) {
	plain, ctl := mustBuild(t, "overlays/own-temporal"), mustBuild(t, "overlays/own-temporal-controller")
	require.Len(t, ctl.workerDeployments, 1)
	w := ctl.workerDeployments[0]
	i := slices.IndexFunc(plain.deployments, func(d appsv1.Deployment) bool { return d.Name == "bookonce-worker" })
	require.GreaterOrEqual(t, i, 0)
	require.Equal(t, plain.deployments[i].Spec.Template, w.Spec.Template, "the WorkerDeployment's pods are the base worker's (components/worker-controller/workerdeployment.yaml)")
	require.Contains(t, []string{"Manual", "AllAtOnce", "Progressive"}, w.Spec.Rollout.Strategy)
	require.NotNil(t, w.Spec.Replicas)
	require.GreaterOrEqual(t, *w.Spec.Replicas, int32(2))
	for _, h := range ctl.hpas {
		require.NotEqual(t, "bookonce-worker", h.Spec.ScaleTargetRef.Name, "HPA %s targets the Deployment the controller replaced", h.Name)
	}

	j := slices.IndexFunc(ctl.connections, func(c connection) bool { return c.Name == w.Spec.WorkerOptions.ConnectionRef.Name })
	require.GreaterOrEqual(t, j, 0, "the WorkerDeployment's Connection %q", w.Spec.WorkerOptions.ConnectionRef.Name)
	c := ctl.connections[j]
	env := temporalEnv(t, ctl, "bookonce-worker")
	require.Equal(t, env["TEMPORAL_ADDRESS"], c.Spec.HostPort, "the controller and the worker reach one Temporal")
	require.Equal(t, env["TEMPORAL_NAMESPACE"], w.Spec.WorkerOptions.TemporalNamespace)
	require.NotNil(t, c.Spec.MutualTLSSecretRef)
	require.True(t, ctl.mountsSecret("bookonce-worker", "/etc/bookonce/temporal-tls"))
	require.Equal(t, "bookonce-temporal-tls", c.Spec.MutualTLSSecretRef.Name, "the controller uses the worker's client certificate")
	require.Equal(t, env["TEMPORAL_TLS_SERVER_NAME"], c.Spec.TLS.ServerName)
	require.NotContains(t, env, "WORKER_BUILD_ID", "the controller names the build (TEMPORAL_WORKER_BUILD_ID)")
}
