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
  - name: llmprobe
    image: {{ include "llmprobe.image" . }}
    {{- with .Values.image.pullPolicy }}
    imagePullPolicy: {{ . }}
    {{- end }}
    args:
      - --config.file=/etc/llmprobe/config/llmprobe.yml
      - --storage.path=/var/lib/llmprobe
      {{- if eq $kind "DaemonSet" }}
      - --collector.gpu
      {{- end }}
      {{- if eq $kind "StatefulSet" }}
      - --shard=$(POD_INDEX)/{{ .Values.replicas }}
      {{- end }}
      {{- with .Values.extraArgs }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    ports:
      - {name: http, containerPort: 9479}
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
      {{- toYaml .Values.securityContext | nindent 6 }}
    resources:
      {{- toYaml .Values.resources | nindent 6 }}
    livenessProbe:
      httpGet: {path: /-/healthy, port: http}
      periodSeconds: 10
    readinessProbe:
      httpGet: {path: /-/ready, port: http}
      periodSeconds: 5
    volumeMounts:
      - {name: config, mountPath: /etc/llmprobe/config, readOnly: true}
      - {name: secrets, mountPath: /etc/llmprobe/secrets, readOnly: true}
      - {name: reports, mountPath: /var/lib/llmprobe}
  {{- if .Values.configReloader.enabled }}
  # Posts to /-/reload when the kubelet updates the mounted ConfigMap or Secret.
  - name: config-reloader
    image: {{ .Values.configReloader.image }}
    args:
      - --watched-dir=/etc/llmprobe/config
      - --watched-dir=/etc/llmprobe/secrets
      - --reload-url=http://127.0.0.1:9479/-/reload
    securityContext:
      {{- toYaml .Values.securityContext | nindent 6 }}
    resources:
      {{- toYaml .Values.configReloader.resources | nindent 6 }}
    volumeMounts:
      - {name: config, mountPath: /etc/llmprobe/config, readOnly: true}
      - {name: secrets, mountPath: /etc/llmprobe/secrets, readOnly: true}
  {{- end }}
volumes:
  - name: config
    configMap: {name: {{ include "llmprobe.fullname" . }}-config}
  - name: secrets
    secret: {secretName: {{ include "llmprobe.secretName" . }}, optional: {{ .Values.secret.optional }}}
  {{- if ne $kind "StatefulSet" }}
  # Burst reports: emptyDir loses them with the pod (the last-burst gauges
  # come back with the next burst); the StatefulSet keeps them on a claim.
  - name: reports
    emptyDir: {sizeLimit: {{ .Values.reports.sizeLimit }}}
  {{- end }}
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
