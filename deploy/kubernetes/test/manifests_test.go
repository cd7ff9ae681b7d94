// Package test checks llmprobe's Kubernetes manifests: each one, and each
// rendered overlay, decodes strictly into the typed objects of k8s.io/api and
// prometheus-operator; unknown fields fail.
package test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/llmprobe/llmprobe/config"
)

var overlays = []string{"deployment", "daemonset", "statefulset"}

// decode decodes one manifest strictly by its kind.
func decode(t *testing.T, where string, doc []byte) any {
	t.Helper()
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var obj any
	switch meta.APIVersion + "/" + meta.Kind {
	case "apps/v1/Deployment":
		obj = &appsv1.Deployment{}
	case "apps/v1/DaemonSet":
		obj = &appsv1.DaemonSet{}
	case "apps/v1/StatefulSet":
		obj = &appsv1.StatefulSet{}
	case "v1/Service":
		obj = &corev1.Service{}
	case "v1/ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1/ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "monitoring.coreos.com/v1/ServiceMonitor":
		obj = &monitoringv1.ServiceMonitor{}
	case "monitoring.coreos.com/v1/PrometheusRule":
		obj = &monitoringv1.PrometheusRule{}
	default:
		t.Errorf("%s: unexpected %s %s", where, meta.APIVersion, meta.Kind)
		return nil
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Errorf("%s (%s): %v", where, meta.Kind, err)
	}
	return obj
}

func splitDocs(b []byte) [][]byte {
	var out [][]byte
	for _, d := range bytes.Split(b, []byte("\n---")) {
		if len(bytes.TrimSpace(d)) > 0 {
			out = append(out, d)
		}
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	files, _ := filepath.Glob("../base/*.yaml")
	more, _ := filepath.Glob("../overlays/*/*.yaml")
	files = append(files, more...)
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range splitDocs(b) {
			decode(t, f, doc)
		}
	}
	// The check can fail.
	var d appsv1.Deployment
	if yaml.UnmarshalStrict([]byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicaz: 1\n"), &d) == nil {
		t.Error("an unknown field was accepted")
	}
}

func render(t *testing.T, overlay string) [][]byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("..", "overlays", overlay))
	if err != nil {
		t.Fatalf("kustomize %s: %v", overlay, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return splitDocs(out)
}

// mountSecrets stands in for the Secret the pod mounts at
// /etc/llmprobe/secrets: the loader reads every file a configuration names.
func mountSecrets(t *testing.T, cfg string) string {
	t.Helper()
	dir := t.TempDir()
	for _, m := range regexp.MustCompile(`/etc/llmprobe/secrets/([\w.-]+)`).FindAllStringSubmatch(cfg, -1) {
		if err := os.WriteFile(filepath.Join(dir, m[1]), []byte("sk-example\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return strings.ReplaceAll(cfg, "/etc/llmprobe/secrets", dir)
}

// Each overlay renders, and every rendered object decodes strictly; the
// workload is non-root, read-only, capability-free, probed and bounded.
func TestOverlaysRender(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			var kinds []string
			var pod *corev1.PodSpec
			for _, doc := range render(t, overlay) {
				switch o := decode(t, overlay, doc).(type) {
				case *appsv1.Deployment:
					pod, kinds = &o.Spec.Template.Spec, append(kinds, "Deployment")
				case *appsv1.DaemonSet:
					pod, kinds = &o.Spec.Template.Spec, append(kinds, "DaemonSet")
				case *appsv1.StatefulSet:
					pod, kinds = &o.Spec.Template.Spec, append(kinds, "StatefulSet")
				case *corev1.ConfigMap:
					kinds = append(kinds, "ConfigMap")
					if _, err := config.Parse([]byte(mountSecrets(t, o.Data["llmprobe.yml"])), "configmap llmprobe.yml"); err != nil {
						t.Errorf("the ConfigMap's configuration: %v", err)
					}
				case *monitoringv1.ServiceMonitor:
					kinds = append(kinds, "ServiceMonitor")
				case *monitoringv1.PrometheusRule:
					kinds = append(kinds, "PrometheusRule")
				case *corev1.Service:
					kinds = append(kinds, "Service")
				}
			}
			for _, want := range []string{"ConfigMap", "Service", "ServiceMonitor", "PrometheusRule"} {
				if !slices.Contains(kinds, want) {
					t.Errorf("rendered %s lacks a %s", overlay, want)
				}
			}
			if pod == nil {
				t.Fatalf("rendered %s has no workload", overlay)
			}
			checkPod(t, pod)
			if !slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/llmprobe/secrets" }) {
				t.Errorf("rendered %s does not mount the secrets its configuration reads", overlay)
			}
		})
	}
}

func checkPod(t *testing.T, pod *corev1.PodSpec) {
	t.Helper()
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("pod may run as root")
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container security context %+v", sc)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/-/healthy" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/-/ready" {
		t.Error("liveness or readiness probe missing")
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Error("resource requests or limits missing")
	}
	for _, res := range []corev1.ResourceName{"nvidia.com/gpu"} {
		if _, ok := c.Resources.Limits[res]; ok {
			t.Error("the pod claims a GPU; NVML needs none")
		}
	}
	if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--storage.path=") }) {
		t.Error("no --storage.path for burst reports")
	}
}
