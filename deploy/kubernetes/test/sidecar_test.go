package test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// engineDeployment is the pod template of an engine's chart that takes
// llmprobe as its dependency and includes the sidecar's templates, as
// docs/helm.md shows.
const engineDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: vllm}
  template:
    metadata:
      labels: {app.kubernetes.io/name: vllm}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model, Qwen/Qwen3-8B, --port, "8000"]
          ports:
            - {name: http, containerPort: 8000}
          livenessProbe:
            {{- include "llmprobe.sidecar.livenessProbe" .Subcharts.llmprobe | nindent 12 }}
        {{- include "llmprobe.sidecar.containers" .Subcharts.llmprobe | nindent 8 }}
      volumes:
        - name: cache
          emptyDir: {}
        {{- include "llmprobe.sidecar.volumes" .Subcharts.llmprobe | nindent 8 }}
`

// renderEngine renders the engine chart with llmprobe (ci/sidecar-values.yaml)
// as its dependency: the engine's Deployment and llmprobe's objects.
func renderEngine(t *testing.T, overrides map[string]any) [][]byte {
	t.Helper()
	docs, err := tryRenderEngine(t, overrides)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	return docs
}

// tryRenderEngine is renderEngine's rendering, its error returned.
func tryRenderEngine(t *testing.T, overrides map[string]any) ([][]byte, error) {
	t.Helper()
	sub, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	engine := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "vllm", Version: "0.1.0", Dependencies: []*chart.Dependency{{Name: "llmprobe", Version: sub.Metadata.Version}}},
		Templates: []*chart.File{{Name: "templates/deployment.yaml", Data: []byte(engineDeployment)}},
	}
	engine.AddDependency(sub)
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = "vllm", "inference"
	install.KubeVersion = kubeVersion
	vals := map[string]any{"llmprobe": values(t, filepath.Join(chartDir, "ci", "sidecar-values.yaml"), overrides)}
	rel, err := install.Run(engine, vals)
	if err != nil {
		return nil, err
	}
	return splitDocs([]byte(rel.Manifest)), nil
}

// The sidecar variant: in the engine's pod, llmprobe's container is
// hardened on its own (the pod's security context is the engine's), its
// volumes do not clash with the engine's, it probes the engine on localhost
// with the health flags, and the engine's liveness probe asks it whether
// tokens flow. The Service selects the engine's pods.
func TestChartSidecarInTheEnginesPod(t *testing.T) {
	docs := renderEngine(t, nil)
	var pod *corev1.PodSpec
	var service *corev1.Service
	var config *corev1.ConfigMap
	for _, doc := range docs {
		switch o := decode(t, "sidecar", doc).(type) {
		case *appsv1.Deployment:
			if o.Name == "vllm" {
				pod = &o.Spec.Template.Spec
			} else {
				t.Errorf("a Deployment %s beside the engine's", o.Name)
			}
		case *corev1.Service:
			service = o
		case *corev1.ConfigMap:
			if strings.HasSuffix(o.Name, "-config") {
				config = o
			}
		}
	}
	if pod == nil || service == nil || config == nil {
		t.Fatalf("engine pod %v, Service %v, ConfigMap %v", pod != nil, service != nil, config != nil)
	}
	var names []string
	for _, c := range pod.Containers {
		names = append(names, c.Name)
	}
	if len(names) < 2 || names[0] != "vllm" || names[1] != "llmprobe" {
		t.Fatalf("containers %v, want vllm, then llmprobe", names)
	}
	engine, probe := pod.Containers[0], pod.Containers[1]
	lp := engine.LivenessProbe
	if lp == nil || lp.HTTPGet == nil || lp.HTTPGet.Path != "/-/healthy/vllm" || lp.HTTPGet.Port.IntValue() != 9479 ||
		lp.PeriodSeconds != 10 || lp.FailureThreshold != 3 {
		t.Errorf("the engine's liveness probe %+v; want llmprobe's /-/healthy/vllm on 9479 every 10 s, 3 failures", lp)
	}
	if flagValue(probe.Args, "--health.window") != "2m" || flagValue(probe.Args, "--health.startup-grace") != "10m" {
		t.Errorf("llmprobe's args %v; want --health.window=2m --health.startup-grace=10m", probe.Args)
	}
	if sc := probe.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 {
		t.Errorf("llmprobe's container may run as the engine's user: %+v", sc)
	}
	// Hardened as in its own pod, non-root from its container's context.
	checkHardened(t, &corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: probe.SecurityContext.RunAsNonRoot}, Containers: []corev1.Container{probe}})
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		if volumes[v.Name] {
			t.Errorf("volume %s twice", v.Name)
		}
		volumes[v.Name] = true
	}
	for _, m := range probe.VolumeMounts {
		if !strings.HasPrefix(m.Name, "llmprobe-") || !volumes[m.Name] {
			t.Errorf("llmprobe mounts %s: want one of its own llmprobe- volumes, have %v", m.Name, volumes)
		}
	}
	if service.Spec.Selector["app.kubernetes.io/name"] != "vllm" || len(service.Spec.Selector) != 1 {
		t.Errorf("the Service selects %v, want the engine's pods", service.Spec.Selector)
	}
	// Port names are the pod's, across its containers: llmprobe's must not
	// take the engine's "http", and the Service must find it.
	ports := map[string]int32{}
	for _, c := range pod.Containers {
		for _, p := range c.Ports {
			if _, dup := ports[p.Name]; dup {
				t.Errorf("port name %q twice in the engine's pod", p.Name)
			}
			ports[p.Name] = p.ContainerPort
		}
	}
	if target := service.Spec.Ports[0].TargetPort.String(); ports[target] != 9479 {
		t.Errorf("the Service's targetPort %q is not llmprobe's 9479 (ports %v)", target, ports)
	}
	var cfg struct {
		Targets []struct{ Name, URL string } `json:"targets"`
	}
	if err := yaml.Unmarshal([]byte(config.Data["llmprobe.yml"]), &cfg); err != nil || len(cfg.Targets) != 1 || cfg.Targets[0].URL != "http://localhost:8000" {
		t.Errorf("llmprobe.yml targets %+v (%v); want the engine on localhost", cfg.Targets, err)
	}

	if probe.ReadinessProbe != nil {
		t.Error("llmprobe's readiness probe in the engine's pod would take the engine out of its Service while llmprobe loads")
	}
	if !slices.Contains(names, "llmprobe-config-reloader") {
		t.Errorf("containers %v: want the reloader as llmprobe-config-reloader beside the engine's", names)
	}

	// sidecar.target picks the target the probe asks about; one that is no
	// configured target is refused, since its 404 would restart the engine.
	two := map[string]any{"targets": []any{map[string]any{"name": "vllm", "url": "http://localhost:8000"}, map[string]any{"name": "other", "url": "http://localhost:8001"}}}
	docs = renderEngine(t, mergeValues(two, map[string]any{"sidecar": map[string]any{"target": "other"}}))
	for _, doc := range docs {
		if d, ok := decode(t, "sidecar", doc).(*appsv1.Deployment); ok {
			if p := d.Spec.Template.Spec.Containers[0].LivenessProbe.HTTPGet.Path; p != "/-/healthy/other" {
				t.Errorf("sidecar.target other: the probe asks %s", p)
			}
		}
	}
	if _, err := tryRenderEngine(t, map[string]any{"sidecar": map[string]any{"target": "vlm"}}); err == nil || !strings.Contains(err.Error(), `sidecar.target: "vlm" is no configured target (vllm)`) {
		t.Errorf("a sidecar.target that is no target: %v", err)
	}
}
