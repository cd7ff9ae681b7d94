// Package test checks llmprobe's Kubernetes manifests and rollout
// templates: each one, and each rendered overlay, decodes strictly into the
// typed objects of k8s.io/api, prometheus-operator, Argo Rollouts and
// Flagger; unknown fields fail.
package test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/plan"
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
	case "batch/v1/Job":
		obj = &batchv1.Job{}
	case "v1/PersistentVolumeClaim":
		obj = &corev1.PersistentVolumeClaim{}
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

// splitDocs splits a YAML stream into its documents, each ending in the line
// break that the separator took (a block scalar's last line keeps it).
func splitDocs(b []byte) [][]byte {
	var out [][]byte
	for _, d := range bytes.Split(b, []byte("\n---")) {
		if len(bytes.TrimSpace(d)) > 0 {
			out = append(out, append(d[:len(d):len(d)], '\n'))
		}
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	files, _ := filepath.Glob("../base/*.yaml")
	for _, glob := range []string{"../overlays/*/*.yaml", "../burst-job/*.yaml", "../burst-job/*/*.yaml"} {
		more, _ := filepath.Glob(glob)
		files = append(files, more...)
	}
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
	return renderDir(t, filepath.Join("..", "overlays", overlay))
}

// renderDir is `kubectl kustomize dir`, one document per object.
func renderDir(t *testing.T, dir string) [][]byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
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
					if _, err := parseConfig(t, o.Data["llmprobe.yml"], "configmap llmprobe.yml"); err != nil {
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
	checkHardened(t, pod)
	c := pod.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/-/healthy" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/-/ready" {
		t.Error("liveness or readiness probe missing")
	}
	if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--storage.path=") }) {
		t.Error("no --storage.path for burst reports")
	}
}

// checkHardened: non-root, read-only, capability-free, bounded, and no GPU claimed.
func checkHardened(t *testing.T, pod *corev1.PodSpec) {
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
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Error("resource requests or limits missing")
	}
	for _, res := range []corev1.ResourceName{"nvidia.com/gpu"} {
		if _, ok := c.Resources.Limits[res]; ok {
			t.Error("the pod claims a GPU; NVML needs none")
		}
	}
}

// flagValue is the value of --name=value in args, or "" without it.
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// claimAt is the PersistentVolumeClaim mounted at path in pod, or "".
func claimAt(pod *corev1.PodSpec, path string) string {
	for _, m := range pod.Containers[0].VolumeMounts {
		for _, v := range pod.Volumes {
			if m.MountPath == path && v.Name == m.Name && v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	return ""
}

// The burst Job renders and decodes strictly (checkBurstJob), and its
// BURST_START placeholder is one ../README.md explains how to fill.
func TestBurstJob(t *testing.T) {
	var split burstSplit
	split.collect(t, "burst-job", renderDir(t, "../burst-job"))
	split.collect(t, "burst-job/merge", renderDir(t, "../burst-job/merge"))
	checkBurstJob(t, split)
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if v := envOf(split.job.Spec.Template.Spec.Containers[0])["BURST_START"].Value; v == "" || !strings.Contains(string(readme), v) {
		t.Errorf("BURST_START is %q, a placeholder ../README.md does not explain", v)
	}
}

// burstSplit is what a burst split over replicas is made of: the Indexed
// Job, the configuration it runs, the claim the shards write to and the Job
// that merges their reports.
type burstSplit struct {
	job, merge *batchv1.Job
	cfg        *config.Config
	claim      *corev1.PersistentVolumeClaim
}

// collect decodes docs strictly and keeps the split's objects: the Job
// whose pods run `gate` is the burst, the one running `report` the merge.
func (s *burstSplit) collect(t *testing.T, where string, docs [][]byte) {
	t.Helper()
	for _, doc := range docs {
		s.add(t, where, decode(t, where, doc))
	}
}

// add keeps obj where it is a part of the split.
func (s *burstSplit) add(t *testing.T, where string, obj any) {
	t.Helper()
	switch o := obj.(type) {
	case *batchv1.Job:
		if args := o.Spec.Template.Spec.Containers[0].Args; len(args) > 0 && args[0] == "report" {
			s.merge = o
		} else {
			s.job = o
		}
	case *corev1.PersistentVolumeClaim:
		s.claim = o
	case *corev1.ConfigMap:
		yml, ok := o.Data["llmprobe.yml"]
		if !ok {
			return
		}
		var err error
		if s.cfg, err = parseConfig(t, yml, where+" configmap llmprobe.yml"); err != nil {
			t.Errorf("the ConfigMap's configuration: %v", err)
		}
	}
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	return env
}

// checkBurstJob: an Indexed Job whose pod i runs shard i/N of a burst its
// ConfigMap configures, all from one shared start, each writing its report to
// a volume every pod can mount; the merge Job reads exactly those N reports
// from it.
func checkBurstJob(t *testing.T, s burstSplit) {
	t.Helper()
	if s.job == nil || s.cfg == nil || s.claim == nil || s.merge == nil {
		t.Fatalf("the split renders job %v, configuration %v, claim %v, merge %v", s.job != nil, s.cfg != nil, s.claim != nil, s.merge != nil)
	}
	job, claim := s.job, s.claim
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || spec.Completions == nil || spec.Parallelism == nil {
		t.Fatalf("job %s is not an Indexed Job with completions and parallelism", job.Name)
	}
	n := int(*spec.Completions)
	if n < 2 || int(*spec.Parallelism) != n {
		t.Errorf("completions %d, parallelism %d: every shard runs at once", n, *spec.Parallelism)
	}
	// A shard retried after the start would be refused; a failed one must
	// not stop the others.
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex != 0 || spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("backoffLimitPerIndex %v, restartPolicy %s: a shard must run once", spec.BackoffLimitPerIndex, spec.Template.Spec.RestartPolicy)
	}
	pod := &spec.Template.Spec
	checkHardened(t, pod)
	c := pod.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "gate" {
		t.Fatalf("the shards run %v, not llmprobe gate", c.Args)
	}
	if got, want := flagValue(c.Args, "--burst.shard"), fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", n); got != want {
		t.Errorf("--burst.shard=%s, want %s (N as the Job's completions)", got, want)
	}
	if got := flagValue(c.Args, "--burst.start"); got != "$(BURST_START)" {
		t.Errorf("--burst.start=%s, want $(BURST_START)", got)
	}
	if e := envOf(c)["JOB_COMPLETION_INDEX"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("JOB_COMPLETION_INDEX is %+v, not the pod's completion index", e)
	}
	name := flagValue(c.Args, "--burst")
	if b, ok := s.cfg.Burst(name); !ok || b.Sweep != nil {
		t.Errorf("--burst=%s: not a single-rate burst of the ConfigMap's configuration", name)
	}
	output := flagValue(c.Args, "--output")
	if !strings.Contains(output, "$(JOB_COMPLETION_INDEX)") || claimAt(pod, filepath.Dir(output)) != claim.Name {
		t.Errorf("--output=%s: not one file per shard on claim %s", output, claim.Name)
	}
	if !slices.Contains(claim.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("claim %s is %v: pods on several nodes write to it", claim.Name, claim.Spec.AccessModes)
	}

	mpod := &s.merge.Spec.Template.Spec
	checkHardened(t, mpod)
	args := mpod.Containers[0].Args
	var want []string
	for i := range n {
		want = append(want, strings.ReplaceAll(output, "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i)))
	}
	if len(args) < 2+n || args[0] != "report" || args[1] != "merge" || !slices.Equal(args[len(args)-n:], want) || flagValue(args, "--output") == "" {
		t.Errorf("the merge runs %v, want report merge --output=... %v", args, want)
	}
	if claimAt(mpod, filepath.Dir(output)) != claim.Name {
		t.Errorf("the merge does not mount claim %s at %s", claim.Name, filepath.Dir(output))
	}
	// Its exit code is the verdict: a failed gate is not retried.
	if s.merge.Spec.BackoffLimit == nil || *s.merge.Spec.BackoffLimit != 0 {
		t.Errorf("merge backoffLimit %v, want 0", s.merge.Spec.BackoffLimit)
	}
}

// parseConfig checks a ConfigMap's configuration whole, limits included, as
// the daemon's load does (plan.Parse).
func parseConfig(t *testing.T, yml, name string) (*config.Config, error) {
	p, err := plan.Parse([]byte(mountSecrets(t, yml)), name)
	if err != nil {
		return nil, err
	}
	return p.Config, nil
}
