{{/* The daemon's pod: the manifests' security context, probes and volumes;
     the DaemonSet's GPU node placement and NVML, the StatefulSet's shard. */}}
{{- define "llmprobe.podSpec" -}}
{{- $kind := .Values.workload.kind -}}
{{- $nodeSelector := .Values.nodeSelector -}}
{{- $tolerations := .Values.tolerations -}}
{{- if eq $kind "DaemonSet" }}
{{- $nodeSelector = merge (deepCopy .Values.nodeSelector) .Values.daemonset.nodeSelector }}
{{- $tolerations = concat .Values.daemonset.tolerations .Values.tolerations }}
{{- with .Values.daemonset.runtimeClassName }}
runtimeClassName: {{ . }}
{{- end }}
{{- end }}
{{- with $nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
serviceAccountName: {{ include "llmprobe.serviceAccountName" . }}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
containers:
  {{- include "llmprobe.containers" (dict "root" . "prefix" "") | nindent 2 }}
volumes:
  {{- include "llmprobe.volumes" (dict "root" . "prefix" "") | nindent 2 }}
{{- end -}}

{{/* The pod template's metadata: a changed configuration restarts the pods
     unless the config reloader applies it in place. */}}
{{- define "llmprobe.podMetadata" -}}
labels:
  {{- include "llmprobe.selectorLabels" . | nindent 2 }}
  app.kubernetes.io/component: exporter
  {{- with .Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- $annotations := deepCopy .Values.podAnnotations }}
{{- if not .Values.configReloader.enabled }}
{{- $_ := set $annotations "checksum/config" (include "llmprobe.config" . | sha256sum) }}
{{- end }}
{{- with $annotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The daemon's containers (llmprobe and the config reloader), in its own
     pod or, as a sidecar, in the engine's: "prefix" goes before its volumes'
     names there, beside the engine's own. */}}
{{- define "llmprobe.containers" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $p := .prefix -}}
{{- $kind := $v.workload.kind -}}
{{- $security := deepCopy $v.securityContext -}}
{{- if eq $kind "Sidecar" }}
{{- /* The engine's pod sets its own pod security context: the user and
       seccomp profile llmprobe runs with go on its container instead. */}}
{{- $security = merge $security (pick $v.podSecurityContext "runAsNonRoot" "runAsUser" "runAsGroup" "seccompProfile") }}
{{- end -}}
- name: llmprobe
  image: {{ include "llmprobe.image" $root }}
  {{- with $v.image.pullPolicy }}
  imagePullPolicy: {{ . }}
  {{- end }}
  args:
    - --config.file=/etc/llmprobe/config/llmprobe.yml
    - --storage.path=/var/lib/llmprobe
    {{- if eq $kind "DaemonSet" }}
    - --collector.gpu
    {{- end }}
    {{- if eq $kind "StatefulSet" }}
    - --shard=$(POD_INDEX)/{{ $v.replicas }}
    {{- end }}
    {{- if eq $kind "Sidecar" }}
    - --health.window={{ $v.sidecar.healthWindow }}
    - --health.startup-grace={{ $v.sidecar.startupGrace }}
    {{- end }}
    {{- with $v.extraArgs }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    # Named apart from the engine's own ports when it runs in the engine's pod.
    - {name: {{ $p }}http, containerPort: 9479}
  {{- if eq $kind "DaemonSet" }}
  env:
    # The NVIDIA runtime mounts libnvidia-ml and the device nodes, for NVML only.
    - {name: NVIDIA_VISIBLE_DEVICES, value: all}
    - {name: NVIDIA_DRIVER_CAPABILITIES, value: utility}
    - name: NODE_NAME
      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
  {{- else if eq $kind "StatefulSet" }}
  env:
    # The replica's ordinal (Kubernetes 1.28+): its shard.
    - name: POD_INDEX
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}
  {{- end }}
  securityContext:
    {{- toYaml $security | nindent 4 }}
  resources:
    {{- toYaml $v.resources | nindent 4 }}
  livenessProbe:
    httpGet: {path: /-/healthy, port: {{ $p }}http}
    periodSeconds: 10
  {{- if ne $kind "Sidecar" }}
  {{- /* In the engine's pod a readiness probe of llmprobe's would take
         the engine out of its Service while llmprobe loads. */}}
  readinessProbe:
    httpGet: {path: /-/ready, port: {{ $p }}http}
    periodSeconds: 5
  {{- end }}
  volumeMounts:
    - {name: {{ $p }}config, mountPath: /etc/llmprobe/config, readOnly: true}
    - {name: {{ $p }}secrets, mountPath: /etc/llmprobe/secrets, readOnly: true}
    - {name: {{ $p }}reports, mountPath: /var/lib/llmprobe}
{{- if $v.configReloader.enabled }}
# Posts to /-/reload when the kubelet updates the mounted ConfigMap or Secret.
- name: {{ $p }}config-reloader
  image: {{ $v.configReloader.image }}
  args:
    - --watched-dir=/etc/llmprobe/config
    - --watched-dir=/etc/llmprobe/secrets
    - --reload-url=http://127.0.0.1:9479/-/reload
  securityContext:
    {{- toYaml $security | nindent 4 }}
  resources:
    {{- toYaml $v.configReloader.resources | nindent 4 }}
  volumeMounts:
    - {name: {{ $p }}config, mountPath: /etc/llmprobe/config, readOnly: true}
    - {name: {{ $p }}secrets, mountPath: /etc/llmprobe/secrets, readOnly: true}
{{- end }}
{{- end -}}

{{/* The daemon's volumes, their names after "prefix". */}}
{{- define "llmprobe.volumes" -}}
{{- $v := .root.Values -}}
{{- $p := .prefix -}}
- name: {{ $p }}config
  configMap: {name: {{ include "llmprobe.fullname" .root }}-config}
- name: {{ $p }}secrets
  secret: {secretName: {{ include "llmprobe.secretName" .root }}, optional: {{ $v.secret.optional }}}
{{- if ne $v.workload.kind "StatefulSet" }}
# Burst reports: emptyDir loses them with the pod (the last-burst gauges
# come back with the next burst); the StatefulSet keeps them on a claim.
- name: {{ $p }}reports
  emptyDir: {sizeLimit: {{ $v.reports.sizeLimit }}}
{{- end }}
{{- end -}}

{{/* The sidecar variant (workload.kind: Sidecar): the engine's chart, with
     this one as its dependency "llmprobe", puts these in the engine's pod:
       containers: [<engine>, {{ include "llmprobe.sidecar.containers" .Subcharts.llmprobe }}]
       volumes:    {{ include "llmprobe.sidecar.volumes" .Subcharts.llmprobe }}
       the engine's livenessProbe: {{ include "llmprobe.sidecar.livenessProbe" .Subcharts.llmprobe }}
     (docs/helm.md#sidecar). */}}
{{- define "llmprobe.sidecar.containers" -}}
{{- include "llmprobe.containers" (dict "root" . "prefix" "llmprobe-") }}
{{- end -}}

{{- define "llmprobe.sidecar.volumes" -}}
{{- include "llmprobe.volumes" (dict "root" . "prefix" "llmprobe-") }}
{{- end -}}

{{/* The engine container's liveness probe: llmprobe's /-/healthy/<target>,
     503 only when requests reached the engine and no token came back. */}}
{{- define "llmprobe.sidecar.livenessProbe" -}}
{{- $s := .Values.sidecar -}}
{{- $names := list -}}
{{- range (include "llmprobe.config" . | fromYaml).targets }}
{{- $names = append $names .name }}
{{- end -}}
{{- $target := $s.target | default (first $names) -}}
{{- if not (has $target $names) }}
{{- fail (printf "sidecar.target: %q is no configured target (%s): the engine's liveness probe would get 404 and restart it" $target (join ", " $names)) }}
{{- end -}}
httpGet: {path: /-/healthy/{{ $target }}, port: 9479}
periodSeconds: {{ $s.livenessProbe.periodSeconds }}
timeoutSeconds: {{ $s.livenessProbe.timeoutSeconds }}
failureThreshold: {{ $s.livenessProbe.failureThreshold }}
{{- end -}}
