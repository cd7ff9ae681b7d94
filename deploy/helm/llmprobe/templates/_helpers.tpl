{{/* The release's name, with the chart's unless it holds it already. */}}
{{- define "llmprobe.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "llmprobe.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "llmprobe.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "llmprobe.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "llmprobe.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "llmprobe.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "llmprobe.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "llmprobe.secretName" -}}
{{- default (printf "%s-secrets" (include "llmprobe.fullname" .)) .Values.secret.name -}}
{{- end -}}

{{/* llmprobe.yml: the whole `config`, or the file made of its parts. */}}
{{- define "llmprobe.config" -}}
{{- if .Values.config -}}
{{- toYaml .Values.config -}}
{{- else -}}
{{- $cfg := dict "targets" .Values.targets "scenarios" .Values.scenarios -}}
{{- with .Values.bursts }}{{ $_ := set $cfg "bursts" . }}{{ end -}}
{{- with .Values.canary }}{{ $_ := set $cfg "canary" . }}{{ end -}}
{{- toYaml $cfg -}}
{{- end -}}
{{- end -}}

{{/* BURST_START: burstJob.start, or the time of rendering (install) plus
     burstJob.startIn, in UTC to the second. */}}
{{- define "llmprobe.burstStart" -}}
{{- if .Values.burstJob.start -}}
{{- .Values.burstJob.start -}}
{{- else -}}
{{- $at := now | mustDateModify (printf "+%s" .Values.burstJob.startIn) -}}
{{- dateInZone "2006-01-02T15:04:05Z" $at "UTC" -}}
{{- end -}}
{{- end -}}
