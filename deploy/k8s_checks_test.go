package deploy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bookonce/bookonce/internal/config"
)

// adminPorts are the private listeners: the gateway's (ADMIN_LISTEN:
// /ops, /v1/review-cases and /metrics), the payment API's
// (PAYMENTS_ADMIN_LISTEN) and the calendar API's (CALENDAR_ADMIN_LISTEN),
// both /metrics and the detailed /healthz.
// adminClientLabel labels the pods allowed to reach them.
var adminPorts = []int32{8090, 8092, 8093}

const adminClientLabel = "bookonce.io/admin-client"

// secretVars are the variables whose values are secrets: they may reach a
// container only through a secretKeyRef.
var secretVars = append([]string{"DATABASE_URL", "STRIPE_SECRET_KEY", "LLM_API_KEY", "TEMPORAL_API_KEY", "BOOKONCE_PAYLOAD_KEYS"},
	func() (names []string) {
		for _, s := range config.AllSecrets {
			names = append(names, string(s))
		}
		return names
	}()...)

func intStr(port int) intstr.IntOrString { return intstr.FromInt32(int32(port)) }

// pod is a pod template with the workload it belongs to.
type pod struct {
	owner string
	spec  corev1.PodTemplateSpec
}

// pods lists the pod templates of every Deployment and Job.
func (m *manifests) pods() []pod {
	var out []pod
	for _, d := range m.deployments {
		out = append(out, pod{"Deployment " + d.Name, d.Spec.Template})
	}
	for _, j := range m.jobs {
		out = append(out, pod{"Job " + j.Name, j.Spec.Template})
	}
	return out
}

// containers lists every container, init containers included, as
// "owner/container".
func (m *manifests) containers() map[string]corev1.Container {
	out := map[string]corev1.Container{}
	for _, p := range m.pods() {
		for _, c := range slices.Concat(p.spec.Spec.InitContainers, p.spec.Spec.Containers) {
			out[p.owner+"/"+c.Name] = c
		}
	}
	return out
}

func (m *manifests) configMap(name string) *corev1.ConfigMap {
	for i := range m.configMaps {
		if m.configMaps[i].Name == name {
			return &m.configMaps[i]
		}
	}
	return nil
}

// mountsSecret reports whether deployment's container mounts a Secret
// volume at path.
func (m *manifests) mountsSecret(deployment, path string) bool {
	for _, d := range m.deployments {
		if d.Name != deployment {
			continue
		}
		for _, vm := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == vm.Name && vm.MountPath == path && v.Secret != nil {
					return true
				}
			}
		}
	}
	return false
}

// checkK8sEnvNames: every variable a container is given, directly or from
// a ConfigMap, has a row in the configuration table (docs/configuration.md); secrets are
// never imported wholesale (envFrom a Secret hides which keys arrive).
func checkK8sEnvNames(m *manifests) (out problems) {
	for _, id := range slices.Sorted(maps.Keys(m.containers())) {
		c := m.containers()[id]
		for _, e := range c.Env {
			if !documented(e.Name) {
				out.addf("%s: env %s is not in docs/configuration.md's table", id, e.Name)
			}
		}
		for _, from := range c.EnvFrom {
			if from.SecretRef != nil {
				out.addf("%s: envFrom Secret %s; name each secret variable with a secretKeyRef", id, from.SecretRef.Name)
			}
			if from.ConfigMapRef != nil && m.configMap(from.ConfigMapRef.Name) == nil {
				out.addf("%s: envFrom ConfigMap %s, which this build does not contain", id, from.ConfigMapRef.Name)
			}
		}
	}
	for _, cm := range m.configMaps {
		for k := range cm.Data {
			if !documented(k) {
				out.addf("ConfigMap %s: %s is not in docs/configuration.md's table", cm.Name, k)
			}
		}
	}
	return out
}

// checkSecretsByReference: no secret in the manifests themselves.
func checkSecretsByReference(m *manifests) (out problems) {
	for _, s := range m.secrets {
		out.addf("Secret %q in the build: secrets are created outside it and referenced", s.Name)
	}
	for _, cm := range m.configMaps {
		for _, k := range secretVars {
			if _, ok := cm.Data[k]; ok {
				out.addf("ConfigMap %s holds the secret %s", cm.Name, k)
			}
		}
	}
	for id, c := range m.containers() {
		for _, e := range c.Env {
			if slices.Contains(secretVars, e.Name) && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
				out.addf("%s: %s must come from a secretKeyRef", id, e.Name)
			}
		}
	}
	return out
}

// probePort is the port a probe asks, if it asks one.
func probePort(p *corev1.Probe) (intstr.IntOrString, bool) {
	switch {
	case p.HTTPGet != nil:
		return p.HTTPGet.Port, true
	case p.TCPSocket != nil:
		return p.TCPSocket.Port, true
	case p.GRPC != nil:
		return intStr(int(p.GRPC.Port)), true
	}
	return intstr.IntOrString{}, false
}

// declares reports whether c has the container port port (by name or number).
func declares(c corev1.Container, port intstr.IntOrString) bool {
	return slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
		return (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal)
	})
}

// checkProbes: every long-running container has readiness and liveness
// probes, and each probe asks a port the container declares.
func checkProbes(m *manifests) (out problems) {
	for _, d := range m.deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			id := d.Name + "/" + c.Name
			if c.ReadinessProbe == nil || c.LivenessProbe == nil {
				out.addf("%s: readiness and liveness probes required", id)
			}
			for what, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe, "startup": c.StartupProbe} {
				if p == nil {
					continue
				}
				if port, ok := probePort(p); !ok || !declares(c, port) {
					out.addf("%s: %s probe asks port %s, which the container does not declare", id, what, port.String())
				}
			}
		}
	}
	return out
}

// checkAdminPrivate: an admin port is in no Service but an admin one
// (ClusterIP), and a NetworkPolicy admits only admin clients to it.
func checkAdminPrivate(m *manifests) (out problems) {
	for _, s := range m.services {
		admin := s.Labels["bookonce.io/admin"] == "true"
		if admin && s.Spec.Type != "" && s.Spec.Type != corev1.ServiceTypeClusterIP {
			out.addf("Service %s: the admin Service must be ClusterIP, is %s", s.Name, s.Spec.Type)
		}
		for _, p := range s.Spec.Ports {
			target := p.TargetPort
			if target.IntVal == 0 && target.StrVal == "" {
				target = intStr(int(p.Port))
			}
			if !admin && m.servesAdmin(s.Spec.Selector, target) {
				out.addf("Service %s: port %s reaches an admin port", s.Name, p.Name)
			}
		}
	}
	out = append(out, m.checkAdminPolicy()...)
	return out
}

// servesAdmin reports whether target, on the pods selector picks, is a
// container's admin port.
func (m *manifests) servesAdmin(selector map[string]string, target intstr.IntOrString) bool {
	for _, d := range m.deployments {
		if len(selector) == 0 || !labels.SelectorFromSet(selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, p := range c.Ports {
				if slices.Contains(adminPorts, p.ContainerPort) && declares(corev1.Container{Ports: []corev1.ContainerPort{p}}, target) {
					return true
				}
			}
		}
	}
	return false
}

// checkAdminPolicy: every pod with an admin port is selected by an
// ingress NetworkPolicy, and no ingress rule of those policies lets
// anyone but admin clients reach that port.
func (m *manifests) checkAdminPolicy() (out problems) {
	for _, d := range m.deployments {
		podLabels := labels.Set(d.Spec.Template.Labels)
		if !slices.ContainsFunc(adminPorts, func(p int32) bool { return m.servesAdmin(d.Spec.Template.Labels, intStr(int(p))) }) {
			continue
		}
		guarded := false
		for _, np := range m.policies {
			sel := labels.SelectorFromSet(np.Spec.PodSelector.MatchLabels)
			if !sel.Matches(podLabels) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
				continue
			}
			guarded = true
			for i, rule := range np.Spec.Ingress {
				if coversAdmin(rule.Ports) && !onlyAdminClients(rule.From) {
					out.addf("NetworkPolicy %s, ingress rule %d: admits more than %s pods to the admin port", np.Name, i, adminClientLabel)
				}
			}
		}
		if !guarded {
			out.addf("Deployment %s: no ingress NetworkPolicy guards its admin port", d.Name)
		}
	}
	return out
}

// coversAdmin reports whether a rule with these ports covers an admin
// port (no ports: every port).
func coversAdmin(ports []networkingv1.NetworkPolicyPort) bool {
	return len(ports) == 0 || slices.ContainsFunc(ports, func(p networkingv1.NetworkPolicyPort) bool {
		return p.Port == nil || (p.Port.Type == intstr.Int && slices.Contains(adminPorts, p.Port.IntVal)) || (p.Port.Type == intstr.String && p.Port.StrVal == "admin")
	})
}

// onlyAdminClients reports whether every peer requires the admin-client
// label (no peers: everyone).
func onlyAdminClients(peers []networkingv1.NetworkPolicyPeer) bool {
	return len(peers) > 0 && !slices.ContainsFunc(peers, func(p networkingv1.NetworkPolicyPeer) bool {
		return p.IPBlock != nil || p.PodSelector == nil || p.PodSelector.MatchLabels[adminClientLabel] != "true"
	})
}

// checkAutoscaling: worker and gateway scale by an HPA that targets an
// existing Deployment, which leaves replicas to it.
func checkAutoscaling(m *manifests) (out problems) {
	scaled := map[string]bool{}
	for _, h := range m.hpas {
		ref := h.Spec.ScaleTargetRef
		i := slices.IndexFunc(m.deployments, func(d appsv1.Deployment) bool { return d.Name == ref.Name })
		switch {
		case ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || i < 0:
			out.addf("HPA %s targets %s %s %s, not a Deployment of this build", h.Name, ref.APIVersion, ref.Kind, ref.Name)
		case h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 || h.Spec.MaxReplicas < *h.Spec.MinReplicas:
			out.addf("HPA %s: want 2 <= minReplicas <= maxReplicas", h.Name)
		case m.deployments[i].Spec.Replicas != nil && m.deployments[i].Annotations[controlled] == "":
			out.addf("Deployment %s sets replicas, which every apply would reset under its HPA", ref.Name)
		default:
			scaled[ref.Name] = true
		}
	}
	for _, d := range m.deployments { // the controller runs each build's workers, two at least
		if d.Annotations[controlled] != "" && d.Spec.Replicas != nil && *d.Spec.Replicas >= 2 {
			scaled[d.Name] = true
		}
	}
	for _, want := range []string{"bookonce-worker", "bookonce-gateway"} {
		if !scaled[want] {
			out.addf("%s has no HorizontalPodAutoscaler", want)
		}
	}
	return out
}

// checkResources: every container requests CPU and memory and is limited
// in memory.
func checkResources(m *manifests) (out problems) {
	for id, c := range m.containers() {
		r := c.Resources
		if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Memory().IsZero() {
			out.addf("%s: cpu and memory requests and a memory limit required, got %v", id, r)
		}
	}
	return out
}

// checkImages: every container runs a tagged (or digested) image.
func checkImages(m *manifests) (out problems) {
	for id, c := range m.containers() {
		name := c.Image[strings.LastIndex(c.Image, "/")+1:]
		if c.Image == "" || !strings.ContainsAny(name, ":@") || strings.HasSuffix(c.Image, ":latest") {
			out.addf("%s: image %q, want a pinned tag or digest", id, c.Image)
		}
	}
	return out
}

// checkSecurity: no container runs as root, escalates, or writes its root
// file system.
func checkSecurity(m *manifests) (out problems) {
	for _, p := range m.pods() {
		ps := p.spec.Spec.SecurityContext
		if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot {
			out.addf("%s: runAsNonRoot required", p.owner)
		}
		for _, c := range p.spec.Spec.Containers {
			sc := c.SecurityContext
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				out.addf("%s/%s: read-only root file system and no privilege escalation required", p.owner, c.Name)
			}
		}
	}
	return out
}

// checkDisruptionBudgets: every Deployment's pods are covered by a PDB.
func checkDisruptionBudgets(m *manifests) (out problems) {
	for _, d := range m.deployments {
		if !slices.ContainsFunc(m.pdbs, func(b policyv1.PodDisruptionBudget) bool {
			return b.Spec.Selector != nil && labels.SelectorFromSet(b.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels))
		}) {
			out.addf("Deployment %s: no PodDisruptionBudget", d.Name)
		}
	}
	return out
}

// checkMigration: one Job migrates, with the database's secret.
func checkMigration(m *manifests) (out problems) {
	for _, j := range m.jobs {
		c := j.Spec.Template.Spec.Containers[0]
		if fmt.Sprint(c.Command) == "[/usr/local/bin/starter]" && slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "DATABASE_URL" }) {
			return nil
		}
	}
	return problems{"no Job runs the migrations (starter with DATABASE_URL)"}
}

type k8sCheck struct {
	name string
	fn   func(*manifests) problems
}

var k8sChecks = []k8sCheck{
	{"env names", checkK8sEnvNames},
	{"secrets by reference", checkSecretsByReference},
	{"probes", checkProbes},
	{"admin port private", checkAdminPrivate},
	{"autoscaling", checkAutoscaling},
	{"resources", checkResources},
	{"images", checkImages},
	{"security", checkSecurity},
	{"disruption budgets", checkDisruptionBudgets},
	{"migration", checkMigration},
	{"scrape every replica", checkScrapeEveryReplica},
}
