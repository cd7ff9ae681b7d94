package test

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "../../helm/llmprobe"

// kubeVersion is the oldest Kubernetes the chart's Chart.yaml accepts; the
// library's default (1.20) is older.
var kubeVersion = &chartutil.KubeVersion{Version: "v1.29.0", Major: "1", Minor: "29"}

// variants are the chart's documented values files (docs/helm.md), "" the
// defaults.
func variants(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no values files in %s/ci: %v", chartDir, err)
	}
	return append([]string{""}, files...)
}

// values reads a values file ("" none) and lays overrides over it.
func values(t *testing.T, file string, overrides map[string]any) map[string]any {
	t.Helper()
	vals := map[string]any{}
	if file != "" {
		v, err := chartutil.ReadValuesFile(file)
		if err != nil {
			t.Fatal(err)
		}
		vals = v
	}
	return mergeValues(vals, overrides)
}

func mergeValues(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if have, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeValues(have, sub)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// renderChart is `helm template llmprobe CHART` into namespace monitoring:
// one document per object, test hooks included.
func renderChart(t *testing.T, vals map[string]any) ([][]byte, error) {
	t.Helper()
	chart, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = "llmprobe", "monitoring"
	install.KubeVersion = kubeVersion
	rel, err := install.Run(chart, vals)
	if err != nil {
		return nil, err
	}
	docs := splitDocs([]byte(rel.Manifest))
	for _, h := range rel.Hooks {
		docs = append(docs, splitDocs([]byte(h.Manifest))...)
	}
	return docs, nil
}

func mustRenderChart(t *testing.T, vals map[string]any) [][]byte {
	t.Helper()
	docs, err := renderChart(t, vals)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	return docs
}

// rendered is a chart's rendering, decoded strictly, by kind.
type rendered struct {
	workload   any
	pod        *corev1.PodSpec
	config     *corev1.ConfigMap
	dashboards []*corev1.ConfigMap
	service    *corev1.Service
	monitor    *monitoringv1.ServiceMonitor
	rule       *monitoringv1.PrometheusRule
	burst      burstSplit
}

func decodeChart(t *testing.T, where string, docs [][]byte) rendered {
	t.Helper()
	var r rendered
	for _, doc := range docs {
		obj := decode(t, where, doc)
		r.burst.add(t, where, obj)
		switch o := obj.(type) {
		case *appsv1.Deployment:
			r.workload, r.pod = o, &o.Spec.Template.Spec
		case *appsv1.DaemonSet:
			r.workload, r.pod = o, &o.Spec.Template.Spec
		case *appsv1.StatefulSet:
			r.workload, r.pod = o, &o.Spec.Template.Spec
		case *corev1.ConfigMap:
			if strings.HasSuffix(o.Name, "-config") {
				r.config = o
			} else {
				r.dashboards = append(r.dashboards, o)
			}
		case *corev1.Service:
			r.service = o
		case *monitoringv1.ServiceMonitor:
			r.monitor = o
		case *monitoringv1.PrometheusRule:
			r.rule = o
		}
	}
	return r
}

// The chart renders with its defaults and each documented values file, and
// every object decodes strictly into k8s.io/api and prometheus-operator
// types; the configuration loads; every container is hardened; what a
// variant switches off is absent.
func TestChartRendersEachVariant(t *testing.T) {
	for _, file := range variants(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			vals := values(t, file, nil)
			r := decodeChart(t, file, mustRenderChart(t, vals))
			if r.config == nil {
				t.Fatal("no ConfigMap with llmprobe.yml")
			}
			// A sidecar's pod is the engine's, which the engine's chart renders.
			daemon := enabled(vals, "workload", true)
			ownPod := daemon && !sidecar(vals)
			if ownPod != (r.pod != nil) || daemon != (r.service != nil) {
				t.Errorf("workload.enabled %v, sidecar %v, yet the workload is rendered %v, the Service %v", daemon, sidecar(vals), r.pod != nil, r.service != nil)
			}
			if r.pod != nil {
				checkPod(t, r.pod)
				for _, c := range r.pod.Containers {
					checkHardened(t, &corev1.PodSpec{SecurityContext: r.pod.SecurityContext, Containers: []corev1.Container{c}})
				}
			}
			if want := daemon && enabled(vals, "serviceMonitor", true); want != (r.monitor != nil) {
				t.Errorf("ServiceMonitor rendered %v, want %v", r.monitor != nil, want)
			}
			if want := enabled(vals, "prometheusRule", true); want != (r.rule != nil) {
				t.Errorf("PrometheusRule rendered %v, want %v", r.rule != nil, want)
			}
			if want := enabled(vals, "dashboards", true); want != (len(r.dashboards) > 0) {
				t.Errorf("%d dashboard ConfigMaps rendered, want them %v", len(r.dashboards), want)
			}
			if want := enabled(vals, "burstJob", false); want != (r.burst.job != nil) {
				t.Errorf("burst Job rendered %v, want %v", r.burst.job != nil, want)
			}
		})
	}
}

// Every values file in ci/ is a row of docs/helm.md's variant table, and
// every row a file.
func TestChartVariantsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/helm.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(ci/[\\w-]+-values\\.yaml)` \\|").FindAllSubmatch(doc, -1) {
		documented = append(documented, filepath.Join(chartDir, string(m[1])))
	}
	files := variants(t)[1:]
	slices.Sort(documented)
	if !slices.Equal(documented, files) {
		t.Errorf("docs/helm.md documents the variants %v, the chart has %v", documented, files)
	}
}

// sidecar says the values run llmprobe in the engine's pod.
func sidecar(vals map[string]any) bool {
	w, _ := vals["workload"].(map[string]any)
	return w["kind"] == "Sidecar"
}

// enabled is values' key.enabled, or def where unset.
func enabled(vals map[string]any, key string, def bool) bool {
	if m, ok := vals[key].(map[string]any); ok {
		if b, ok := m["enabled"].(bool); ok {
			return b
		}
	}
	return def
}

// Helm's lint rules (Chart.yaml, values, templates, dependencies), as `helm
// lint --strict`, pass for every variant: no warning, no error.
func TestChartLint(t *testing.T) {
	for _, file := range variants(t) {
		linter := lint.AllWithKubeVersion(chartDir, values(t, file, nil), "monitoring", kubeVersion)
		for _, m := range linter.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("%s: %s", filepath.Base(file), m)
			}
		}
	}
	// The lint can fail.
	bad := lint.AllWithKubeVersion(chartDir, map[string]any{"workload": map[string]any{"kind": "ReplicaSet"}}, "monitoring", kubeVersion)
	if bad.HighestSeverity < support.ErrorSev {
		t.Error("workload.kind ReplicaSet passed the lint")
	}
}

// The StatefulSet's replica i runs shard i/replicas, whatever replicas is;
// more than one replica of another kind is refused with the reason.
func TestChartShardsFollowReplicas(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		vals := values(t, "", map[string]any{"workload": map[string]any{"kind": "StatefulSet"}, "replicas": n})
		r := decodeChart(t, "statefulset", mustRenderChart(t, vals))
		sts, ok := r.workload.(*appsv1.StatefulSet)
		if !ok {
			t.Fatalf("replicas %d: no StatefulSet", n)
		}
		if sts.Spec.Replicas == nil || int(*sts.Spec.Replicas) != n {
			t.Errorf("replicas %d: the StatefulSet has %v", n, sts.Spec.Replicas)
		}
		if got, want := flagValue(r.pod.Containers[0].Args, "--shard"), "$(POD_INDEX)/"+strconv.Itoa(n); got != want {
			t.Errorf("replicas %d: --shard=%s, want %s", n, got, want)
		}
		if e := envOf(r.pod.Containers[0])["POD_INDEX"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
			e.ValueFrom.FieldRef.FieldPath != "metadata.labels['apps.kubernetes.io/pod-index']" {
			t.Errorf("POD_INDEX is %+v, not the replica's ordinal", e)
		}
	}
	for _, kind := range []string{"Deployment", "DaemonSet"} {
		_, err := renderChart(t, values(t, "", map[string]any{"workload": map[string]any{"kind": kind}, "replicas": 2}))
		if err == nil || !strings.Contains(err.Error(), "replicas: 2 needs workload.kind=StatefulSet") {
			t.Errorf("%s with 2 replicas: %v", kind, err)
		}
	}
}

// The chart with values equivalent to an overlay renders what the overlay
// renders: the same pod, workload spec, configuration, Service ports,
// ServiceMonitor endpoints and rules. The two share their sources so they
// never drift: a change to one that the other lacks fails here.
func TestChartMatchesKustomize(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			over := map[string]any{"workload": map[string]any{"kind": map[string]string{
				"deployment": "Deployment", "daemonset": "DaemonSet", "statefulset": "StatefulSet"}[overlay]}}
			if overlay == "statefulset" {
				over["replicas"] = 3
			}
			chart := decodeChart(t, "chart", mustRenderChart(t, values(t, "", over)))
			kust := decodeChart(t, overlay, render(t, overlay))
			if chart.pod == nil || kust.pod == nil {
				t.Fatalf("workload rendered by the chart %v, by kustomize %v", chart.pod != nil, kust.pod != nil)
			}
			sameSpec(t, "pod spec", chart.pod, kust.pod)
			sameSpec(t, "workload spec", workloadSpec(chart.workload), workloadSpec(kust.workload))
			var chartCfg, kustCfg map[string]any
			if err := yaml.Unmarshal([]byte(chart.config.Data["llmprobe.yml"]), &chartCfg); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(kust.config.Data["llmprobe.yml"]), &kustCfg); err != nil {
				t.Fatal(err)
			}
			sameSpec(t, "llmprobe.yml", chartCfg, kustCfg)
			sameSpec(t, "Service ports", chart.service.Spec.Ports, kust.service.Spec.Ports)
			sameSpec(t, "ServiceMonitor endpoints", chart.monitor.Spec.Endpoints, kust.monitor.Spec.Endpoints)
			sameSpec(t, "PrometheusRule spec", chart.rule.Spec, kust.rule.Spec)
		})
	}
}

// workloadSpec is a workload's spec without what names the release (the
// selector and the pod's labels) and the pod, compared on its own.
func workloadSpec(w any) any {
	switch o := w.(type) {
	case *appsv1.Deployment:
		s := o.Spec
		s.Selector, s.Template = nil, corev1.PodTemplateSpec{}
		return s
	case *appsv1.DaemonSet:
		s := o.Spec
		s.Selector, s.Template = nil, corev1.PodTemplateSpec{}
		return s
	case *appsv1.StatefulSet:
		s := o.Spec
		s.Selector, s.Template = nil, corev1.PodTemplateSpec{}
		return s
	}
	return nil
}

// sameSpec compares two objects as YAML, so a difference reads as one.
func sameSpec(t *testing.T, what string, chart, kustomize any) {
	t.Helper()
	if reflect.DeepEqual(chart, kustomize) {
		return
	}
	a, _ := yaml.Marshal(chart)
	b, _ := yaml.Marshal(kustomize)
	t.Errorf("%s differs between the chart and kustomize:\nchart:\n%s\nkustomize:\n%s", what, a, b)
}

// The chart ships copies of dashboards/*.json and alerts/llmprobe.rules.yml
// (Helm reads no file outside the chart): `make generate` refreshes them.
func TestChartFilesAreCopies(t *testing.T) {
	sources, _ := filepath.Glob("../../../dashboards/*.json")
	copies, _ := filepath.Glob(filepath.Join(chartDir, "files/dashboards/*.json"))
	if len(sources) == 0 || len(sources) != len(copies) {
		t.Errorf("%d dashboards, %d copies in the chart: run make generate", len(sources), len(copies))
	}
	pairs := map[string]string{"../../../alerts/llmprobe.rules.yml": filepath.Join(chartDir, "files/llmprobe.rules.yml")}
	for _, s := range sources {
		pairs[s] = filepath.Join(chartDir, "files/dashboards", filepath.Base(s))
	}
	for src, cp := range pairs {
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(cp); err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s is not a copy of %s (%v): run make generate", cp, src, err)
		}
	}
}

// Each dashboard arrives as a ConfigMap labelled for Grafana's sidecar,
// holding the dashboard's JSON as dashboards/ has it; label, value,
// namespace and annotations are the values'.
func TestChartDashboards(t *testing.T) {
	sources, _ := filepath.Glob("../../../dashboards/*.json")
	for _, tc := range []struct {
		over             map[string]any
		label, value, ns string
		annotations      map[string]string
	}{
		{nil, "grafana_dashboard", "1", "", nil},
		{map[string]any{"dashboards": map[string]any{"label": "dashboards.example/grafana", "labelValue": "llmprobe",
			"namespace": "grafana", "annotations": map[string]any{"grafana_folder": "llmprobe"}}},
			"dashboards.example/grafana", "llmprobe", "grafana", map[string]string{"grafana_folder": "llmprobe"}},
	} {
		r := decodeChart(t, "dashboards", mustRenderChart(t, values(t, "", tc.over)))
		got := map[string]string{}
		for _, cm := range r.dashboards {
			if cm.Labels[tc.label] != tc.value || cm.Namespace != tc.ns || !maps.Equal(cm.Annotations, tc.annotations) {
				t.Errorf("ConfigMap %s: labels %v, namespace %q, annotations %v; want %s=%q in %q with %v",
					cm.Name, cm.Labels, cm.Namespace, cm.Annotations, tc.label, tc.value, tc.ns, tc.annotations)
			}
			maps.Copy(got, cm.Data)
		}
		if len(r.dashboards) != len(sources) || len(got) != len(sources) {
			t.Errorf("%d ConfigMaps with %d dashboards, want %d", len(r.dashboards), len(got), len(sources))
		}
		for _, s := range sources {
			want, err := os.ReadFile(s)
			if err != nil {
				t.Fatal(err)
			}
			if got[filepath.Base(s)] != string(want) {
				t.Errorf("the ConfigMap of %s does not hold the file as it is", filepath.Base(s))
			}
		}
	}
}

// The chart's burst Job is the kustomize one's split (checkBurstJob), its
// shards and merge follow burstJob.shards, the merge is `helm test`, and
// BURST_START needs no hand edit: install time + burstJob.startIn, or
// burstJob.start as given.
func TestChartBurstJob(t *testing.T) {
	file := filepath.Join(chartDir, "ci", "burst-job-values.yaml")
	for _, shards := range []int{3, 5} {
		before := time.Now()
		r := decodeChart(t, "burst-job", mustRenderChart(t, values(t, file, map[string]any{"burstJob": map[string]any{"shards": shards}})))
		after := time.Now()
		checkBurstJob(t, r.burst)
		if got := int(*r.burst.job.Spec.Completions); got != shards {
			t.Errorf("burstJob.shards %d, completions %d", shards, got)
		}
		if hook := r.burst.merge.Annotations["helm.sh/hook"]; hook != "test" {
			t.Errorf("the merge Job's hook is %q: it runs when `helm test` asks, after the burst", hook)
		}
		start, err := time.Parse(time.RFC3339, envOf(r.burst.job.Spec.Template.Spec.Containers[0])["BURST_START"].Value)
		if err != nil {
			t.Fatalf("BURST_START: %v", err)
		}
		// RFC 3339 to the second: the start may be up to a second before
		// render time + 3m.
		if lo, hi := before.Add(3*time.Minute-time.Second), after.Add(3*time.Minute); start.Before(lo) || start.After(hi) {
			t.Errorf("BURST_START %s, want install time + 3m (%s to %s)", start, lo, hi)
		}
	}
	r := decodeChart(t, "burst-job", mustRenderChart(t, values(t, file, map[string]any{"burstJob": map[string]any{
		"start": "2026-06-01T12:00:00Z", "baseline": "previous.json"}})))
	checkBurstJob(t, r.burst)
	if got := envOf(r.burst.job.Spec.Template.Spec.Containers[0])["BURST_START"].Value; got != "2026-06-01T12:00:00Z" {
		t.Errorf("burstJob.start 2026-06-01T12:00:00Z, BURST_START %s", got)
	}
	if got := flagValue(r.burst.merge.Spec.Template.Spec.Containers[0].Args, "--baseline"); got != "/reports/previous.json" {
		t.Errorf("burstJob.baseline previous.json, the merge's --baseline=%s", got)
	}
	if args := r.burst.merge.Spec.Template.Spec.Containers[0].Args; flagValue(args, "--push.url") != "" || len(r.burst.merge.Spec.Template.Spec.Volumes) != 1 {
		t.Errorf("no burstJob.push, yet the merge pushes: %q, volumes %v", args, r.burst.merge.Spec.Template.Spec.Volumes)
	}
	// Without a URL the other push values are inert: the merge would refuse them.
	r = decodeChart(t, "burst-job", mustRenderChart(t, values(t, file, map[string]any{"burstJob": map[string]any{
		"push": map[string]any{"release": "v1.2.3", "httpConfigSecret": "pushgateway-auth"}}})))
	if args := r.burst.merge.Spec.Template.Spec.Containers[0].Args; slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--push.") }) ||
		len(r.burst.merge.Spec.Template.Spec.Volumes) != 1 {
		t.Errorf("burstJob.push without a url: the merge gets %q, volumes %v", args, r.burst.merge.Spec.Template.Spec.Volumes)
	}

	// The merge pushes the burst's run, its credentials from a Secret.
	r = decodeChart(t, "burst-job", mustRenderChart(t, values(t, file, map[string]any{"burstJob": map[string]any{
		"push": map[string]any{"url": "http://pushgateway.monitoring:9091", "release": "v1.2.3", "httpConfigSecret": "pushgateway-auth"}}})))
	checkBurstJob(t, r.burst)
	merge := r.burst.merge.Spec.Template.Spec
	args := merge.Containers[0].Args
	for flag, want := range map[string]string{"--push.url": "http://pushgateway.monitoring:9091", "--push.release": "v1.2.3", "--push.http-config.file": "/etc/llmprobe/push/http-config.yml"} {
		if got := flagValue(args, flag); got != want {
			t.Errorf("burstJob.push: the merge's %s=%q, want %q", flag, got, want)
		}
	}
	var mounted bool
	for _, m := range merge.Containers[0].VolumeMounts {
		mounted = mounted || (m.Name == "push" && m.MountPath == "/etc/llmprobe/push" && m.ReadOnly)
	}
	var secret string
	for _, v := range merge.Volumes {
		if v.Name == "push" && v.Secret != nil {
			secret = v.Secret.SecretName
		}
	}
	if !mounted || secret != "pushgateway-auth" {
		t.Errorf("burstJob.push.httpConfigSecret: mounted %v, Secret %q; want pushgateway-auth read-only at /etc/llmprobe/push", mounted, secret)
	}
	if _, err := renderChart(t, values(t, file, map[string]any{"burstJob": map[string]any{"push": map[string]any{"url": "http://ci:secret@pushgateway:9091"}}})); err == nil {
		t.Error("burstJob.push.url with credentials was accepted")
	}
	if _, err := renderChart(t, values(t, file, map[string]any{"burstJob": map[string]any{"startIn": "three minutes"}})); err == nil {
		t.Error("burstJob.startIn \"three minutes\" was accepted")
	}
}

// Values of a wrong name or type stop the install with the key that is
// wrong (values.schema.json), before anything is applied.
func TestChartRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		vals map[string]any
		want string
	}{
		{map[string]any{"replica": 3}, "replica"},
		{map[string]any{"replicas": 0}, "/replicas"},
		{map[string]any{"workload": map[string]any{"kind": "ReplicaSet"}}, "/workload/kind"},
		{map[string]any{"dashboards": map[string]any{"lable": "x"}}, "lable"},
		{map[string]any{"burstJob": map[string]any{"shards": 1}}, "/burstJob/shards"},
		{map[string]any{"burstJob": map[string]any{"start": "tomorrow"}}, "/burstJob/start"},
	} {
		_, err := renderChart(t, tc.vals)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %v: %v, want an error naming %s", tc.vals, err, tc.want)
		}
	}
}

// Without the reloader a changed configuration changes the pod template (a
// checksum), so the pods restart with it; with it, the template stays and
// a sidecar posts to llmprobe's /-/reload when the mounted files change.
func TestChartConfigReload(t *testing.T) {
	podOf := func(over map[string]any) *corev1.PodTemplateSpec {
		r := decodeChart(t, "reload", mustRenderChart(t, values(t, "", over)))
		return &r.workload.(*appsv1.Deployment).Spec.Template
	}
	changed := map[string]any{"canary": map[string]any{"interval": "30s"}}
	a, b := podOf(nil), podOf(changed)
	if a.Annotations["checksum/config"] == "" || a.Annotations["checksum/config"] == b.Annotations["checksum/config"] {
		t.Errorf("checksums %q and %q: a changed configuration must change the pod template", a.Annotations["checksum/config"], b.Annotations["checksum/config"])
	}
	on := map[string]any{"configReloader": map[string]any{"enabled": true}}
	a, b = podOf(on), podOf(mergeValues(changed, on))
	if !reflect.DeepEqual(a, b) {
		t.Error("with the reloader, a changed configuration changed the pod template: the pods would restart")
	}
	if len(a.Spec.Containers) != 2 {
		t.Fatalf("with the reloader, %d containers", len(a.Spec.Containers))
	}
	c := a.Spec.Containers[1]
	if got := flagValue(c.Args, "--reload-url"); got != "http://127.0.0.1:9479/-/reload" {
		t.Errorf("the reloader posts to %q", got)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	for _, want := range []string{"--watched-dir=/etc/llmprobe/config", "--watched-dir=/etc/llmprobe/secrets"} {
		dir := strings.TrimPrefix(want, "--watched-dir=")
		if !slices.Contains(c.Args, want) || mounts[dir] == "" {
			t.Errorf("the reloader does not watch %s (args %v, mounts %v)", dir, c.Args, mounts)
		}
	}
}
