package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizations are the trees `kubectl apply -k` is pointed at: the base,
// the two overlays that say where Temporal is, and own-temporal with the
// Temporal Worker Controller running the worker.
var kustomizations = []string{"base", "overlays/own-temporal", "overlays/temporal-cloud", "overlays/own-temporal-controller"}

// manifests is what one kustomization builds, decoded into the API's
// typed structs, so a misspelt field fails the decoding instead of being
// dropped by the API server.
type manifests struct {
	deployments []appsv1.Deployment
	jobs        []batchv1.Job
	services    []corev1.Service
	configMaps  []corev1.ConfigMap
	secrets     []corev1.Secret
	pdbs        []policyv1.PodDisruptionBudget
	hpas        []autoscalingv2.HorizontalPodAutoscaler
	policies    []networkingv1.NetworkPolicy
	// The Temporal Worker Controller's resources; each WorkerDeployment
	// is also in deployments, as the Deployment it makes per build.
	workerDeployments []workerDeployment
	connections       []connection
}

// buildKustomization runs kustomize (the builder `kubectl apply -k` uses)
// on deploy/k8s/<dir> and decodes every object it emits.
func buildKustomization(dir string) (*manifests, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("k8s", dir))
	if err != nil {
		return nil, err
	}
	out := &manifests{}
	for _, r := range m.Resources() {
		raw, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		if err := out.add(r.GetKind(), raw); err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err)
		}
	}
	return out, nil
}

// add decodes raw as kind, strictly: an unknown field is an error.
func (m *manifests) add(kind string, raw []byte) error {
	dec := func(v any) error {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		return d.Decode(v)
	}
	switch kind {
	case "Deployment":
		return decodeInto(dec, &m.deployments)
	case "Job":
		return decodeInto(dec, &m.jobs)
	case "Service":
		return decodeInto(dec, &m.services)
	case "ConfigMap":
		return decodeInto(dec, &m.configMaps)
	case "Secret":
		return decodeInto(dec, &m.secrets)
	case "PodDisruptionBudget":
		return decodeInto(dec, &m.pdbs)
	case "HorizontalPodAutoscaler":
		return decodeInto(dec, &m.hpas)
	case "NetworkPolicy":
		return decodeInto(dec, &m.policies)
	case "WorkerDeployment":
		var ws []workerDeployment
		if err := decodeInto(dec, &ws); err != nil {
			return err
		}
		m.addWorkerDeployment(ws[0])
		return nil
	case "Connection":
		return decodeInto(dec, &m.connections)
	}
	return fmt.Errorf("kind %s is not checked by deploy/k8s_test.go: add it there", kind)
}

// decodeInto decodes one object and appends it to list.
func decodeInto[T any](dec func(any) error, list *[]T) error {
	var v T
	if err := dec(&v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

// mustBuild builds dir or fails the test.
func mustBuild(t *testing.T, dir string) *manifests {
	t.Helper()
	m, err := buildKustomization(dir)
	require.NoError(t, err, "kustomize build deploy/k8s/%s", dir)
	return m
}

// TestKustomizations: the base and both overlays build, and each passes
// every check.
func TestKustomizations(t *testing.T) {
	for _, dir := range kustomizations {
		m := mustBuild(t, dir)
		for _, c := range k8sChecks {
			t.Run(dir+"/"+c.name, func(t *testing.T) {
				ps := c.fn(m)
				require.Emptyf(t, ps, "\n%s", strings.Join(ps, "\n"))
			})
		}
	}
}

// TestK8sChecksCanFail breaks the built base in one way per case and
// requires the named check to notice, so a green TestKustomizations means
// something.
func TestK8sChecksCanFail(t *testing.T) {
	dep := func(name string, f func(*appsv1.Deployment)) func(*manifests) {
		return func(m *manifests) {
			i := slices.IndexFunc(m.deployments, func(d appsv1.Deployment) bool { return d.Name == name })
			f(&m.deployments[i])
		}
	}
	ctr := func(name string, f func(*corev1.Container)) func(*manifests) {
		return dep(name, func(d *appsv1.Deployment) { f(&d.Spec.Template.Spec.Containers[0]) })
	}
	cases := []struct {
		check  string
		mutate func(*manifests)
	}{
		{"env names", ctr("bookonce-worker", func(c *corev1.Container) { c.Env = append(c.Env, corev1.EnvVar{Name: "TWILIO_TOKEN", Value: "x"}) })},
		{"env names", func(m *manifests) { m.configMaps[0].Data["HOLDTTL"] = "5m" }},
		{"secrets by reference", ctr("bookonce-gateway", func(c *corev1.Container) {
			c.Env = append(c.Env, corev1.EnvVar{Name: "TWILIO_AUTH_TOKEN", Value: "literal"})
		})},
		{"secrets by reference", func(m *manifests) { m.configMaps[0].Data["DATABASE_URL"] = "postgres://u:pw@db/bookonce" }},
		{"secrets by reference", func(m *manifests) { m.secrets = append(m.secrets, corev1.Secret{}) }},
		{"probes", ctr("bookonce-calendar", func(c *corev1.Container) { c.ReadinessProbe = nil })},
		{"probes", ctr("bookonce-payments", func(c *corev1.Container) { c.LivenessProbe.TCPSocket.Port.StrVal = "metrics" })},
		{"admin port private", func(m *manifests) {
			i := slices.IndexFunc(m.services, func(s corev1.Service) bool { return s.Name == "bookonce-gateway" })
			m.services[i].Spec.Ports = append(m.services[i].Spec.Ports, corev1.ServicePort{Name: "ops", Port: 80, TargetPort: intStr(8090)})
		}},
		{"admin port private", func(m *manifests) {
			i := slices.IndexFunc(m.policies, func(p networkingv1.NetworkPolicy) bool { return p.Name == "bookonce-gateway" })
			m.policies[i].Spec.Ingress[0].Ports = nil // every port, from anywhere
		}},
		{"admin port private", func(m *manifests) { // the payment API's metrics on its public Service
			i := slices.IndexFunc(m.services, func(s corev1.Service) bool { return s.Name == "bookonce-payments" })
			m.services[i].Spec.Ports = append(m.services[i].Spec.Ports, corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intStr(8092)})
		}},
		{"admin port private", func(m *manifests) { // ... or open to anyone
			i := slices.IndexFunc(m.policies, func(p networkingv1.NetworkPolicy) bool { return p.Name == "bookonce-payments" })
			m.policies[i].Spec.Ingress[0].Ports = append(m.policies[i].Spec.Ingress[0].Ports, networkingv1.NetworkPolicyPort{Port: new(intStr(8092))})
		}},
		{"admin port private", func(m *manifests) { // the calendar API's metrics on its public Service
			i := slices.IndexFunc(m.services, func(s corev1.Service) bool { return s.Name == "bookonce-calendar" })
			m.services[i].Spec.Ports = append(m.services[i].Spec.Ports, corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intStr(8093)})
		}},
		{"admin port private", func(m *manifests) { // ... or open to the worker
			i := slices.IndexFunc(m.policies, func(p networkingv1.NetworkPolicy) bool { return p.Name == "bookonce-calendar" })
			m.policies[i].Spec.Ingress[0].Ports = append(m.policies[i].Spec.Ingress[0].Ports, networkingv1.NetworkPolicyPort{Port: new(intStr(8093))})
		}},
		{"autoscaling", func(m *manifests) { m.hpas[0].Spec.ScaleTargetRef.Name = "bookonce-nothing" }},
		{"autoscaling", dep("bookonce-worker", func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(3)) })},
		{"resources", ctr("bookonce-worker", func(c *corev1.Container) { c.Resources.Requests = nil })},
		{"images", ctr("bookonce-gateway", func(c *corev1.Container) { c.Image = "" })},
		{"security", ctr("bookonce-calendar", func(c *corev1.Container) { c.SecurityContext.ReadOnlyRootFilesystem = new(false) })},
		{"disruption budgets", func(m *manifests) { m.pdbs = m.pdbs[1:] }},
		{"migration", func(m *manifests) { m.jobs = nil }},
		{"scrape every replica", ctr("bookonce-gateway", func(c *corev1.Container) {
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "OPS_SCRAPE_URLS" })
			c.Env[i].Value = strings.Replace(c.Env[i].Value, "dns+http://bookonce-worker-replicas", "http://bookonce-worker", 1)
		})},
		{"scrape every replica", func(m *manifests) {
			i := slices.IndexFunc(m.services, func(s corev1.Service) bool { return s.Name == "bookonce-payments-replicas" })
			m.services[i].Spec.ClusterIP = ""
		}},
		{"scrape every replica", ctr("bookonce-gateway", func(c *corev1.Container) { // the public payment port serves no /metrics
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "OPS_SCRAPE_URLS" })
			c.Env[i].Value = strings.Replace(c.Env[i].Value, "bookonce-payments-replicas:8092", "bookonce-payments-replicas:8082", 1)
		})},
		{"scrape every replica", ctr("bookonce-gateway", func(c *corev1.Container) { // nor the public calendar port
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "OPS_SCRAPE_URLS" })
			c.Env[i].Value = strings.Replace(c.Env[i].Value, "bookonce-calendar-replicas:8093", "bookonce-calendar-replicas:8081", 1)
		})},
	}
	for _, tc := range cases {
		m := mustBuild(t, "base")
		tc.mutate(m)
		i := slices.IndexFunc(k8sChecks, func(c k8sCheck) bool { return c.name == tc.check })
		require.GreaterOrEqual(t, i, 0, "no check %q", tc.check)
		require.NotEmpty(t, k8sChecks[i].fn(m), "check %q missed a broken build", tc.check)
	}
}

// temporalEnv is the environment the Temporal clients of m get from the
// bookonce-temporal ConfigMap and their own env.
func temporalEnv(t *testing.T, m *manifests, deployment string) map[string]string {
	t.Helper()
	i := slices.IndexFunc(m.deployments, func(d appsv1.Deployment) bool { return d.Name == deployment })
	require.GreaterOrEqual(t, i, 0, "no Deployment %s", deployment)
	c := m.deployments[i].Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef != nil {
			maps := m.configMap(from.ConfigMapRef.Name)
			require.NotNil(t, maps, "ConfigMap %s", from.ConfigMapRef.Name)
			for k, v := range maps.Data {
				env[k] = v
			}
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		default:
			env[e.Name] = e.Value
		}
	}
	return env
}

// TestOverlaysReachTemporal: each overlay points both Temporal clients at
// its Temporal and gives them its credentials, by reference, and none
// lets them fall back to plaintext.
func TestOverlaysReachTemporal(t *testing.T) {
	cases := []struct {
		overlay string
		want    map[string]string
		mount   string // a Secret volume mounted there, "" none
	}{
		{"overlays/own-temporal", map[string]string{
			"TEMPORAL_ADDRESS":                 "temporal-frontend.temporal.svc.cluster.local:7233",
			"TEMPORAL_TLS_CLIENT_CERT_PATH":    "/etc/bookonce/temporal-tls/tls.crt",
			"TEMPORAL_TLS_CLIENT_KEY_PATH":     "/etc/bookonce/temporal-tls/tls.key",
			"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "/etc/bookonce/temporal-tls/ca.crt",
		}, "/etc/bookonce/temporal-tls"},
		{"overlays/own-temporal-controller", map[string]string{
			"TEMPORAL_ADDRESS":                 "temporal-frontend.temporal.svc.cluster.local:7233",
			"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "/etc/bookonce/temporal-tls/ca.crt",
		}, "/etc/bookonce/temporal-tls"},
		{"overlays/temporal-cloud", map[string]string{
			"TEMPORAL_ADDRESS":   "my-namespace.my-account.tmprl.cloud:7233",
			"TEMPORAL_NAMESPACE": "my-namespace.my-account",
			"TEMPORAL_API_KEY":   "secret:bookonce-temporal-cloud/api-key",
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.overlay, func(t *testing.T) {
			m := mustBuild(t, tc.overlay)
			for _, d := range []string{"bookonce-worker", "bookonce-gateway"} {
				env := temporalEnv(t, m, d)
				require.NotContains(t, env, "TEMPORAL_ALLOW_PLAINTEXT", "%s: a cluster's Temporal is reached over TLS", d)
				for k, v := range tc.want {
					require.Equal(t, v, env[k], "%s: %s", d, k)
				}
				if tc.mount != "" {
					require.True(t, m.mountsSecret(d, tc.mount), "%s: no Secret volume at %s", d, tc.mount)
				}
			}
			for _, d := range []string{"bookonce-calendar", "bookonce-payments"} {
				require.NotContains(t, temporalEnv(t, m, d), "TEMPORAL_ADDRESS", "%s never talks to Temporal", d)
			}
		})
	}
}
