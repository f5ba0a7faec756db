{{/* The image of a component ("scheduler", "controller", "admission"): Volcano's keys. */}}
{{- define "volcano-py.image" -}}
{{- $basic := .root.Values.basic -}}
{{- $name := index $basic (printf "%s_image_name" .component) -}}
{{- $tag := index $basic (printf "%s_image_tag_version" .component) | default $basic.image_tag_version -}}
{{- if $basic.image_registry -}}
{{ $basic.image_registry }}/{{ $name }}:{{ $tag }}
{{- else -}}
{{ $name }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/* metadata.labels: the component's own and common_labels (Volcano's merge). */}}
{{- define "volcano-py.labels" -}}
{{- $custom := .root.Values.custom -}}
{{- $own := dict "app" .app "app.kubernetes.io/part-of" "volcano-py" "app.kubernetes.io/instance" .root.Release.Name -}}
{{- $extra := index $custom (printf "%s_labels" .component) | default (dict) -}}
{{- toYaml (mustMerge $own $extra ($custom.common_labels | default (dict))) -}}
{{- end -}}

{{/* Just common_labels, for objects that are no component's workload. */}}
{{- define "volcano-py.commonLabels" -}}
{{- $own := dict "app.kubernetes.io/part-of" "volcano-py" "app.kubernetes.io/instance" .Release.Name -}}
{{- toYaml (mustMerge $own (.Values.custom.common_labels | default (dict))) -}}
{{- end -}}

{{/* A pod's placement and identity: Volcano's per-component keys, else the default_ ones. */}}
{{- define "volcano-py.podSettings" -}}
{{- $custom := .root.Values.custom -}}
{{- $tolerations := index $custom (printf "%s_tolerations" .component) | default $custom.default_tolerations -}}
{{- $nodeSelector := index $custom (printf "%s_ns" .component) | default $custom.default_ns -}}
{{- $affinity := index $custom (printf "%s_affinity" .component) | default $custom.default_affinity -}}
{{- $sc := index $custom (printf "%s_sc" .component) | default $custom.default_sc -}}
serviceAccountName: {{ .serviceAccount }}
priorityClassName: system-cluster-critical
{{- with $tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $sc }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.basic.image_pull_secret }}
imagePullSecrets:
  - name: {{ . }}
{{- end }}
{{- end -}}

{{/* A container's security context: <component>_main_csc, else default_csc. */}}
{{- define "volcano-py.containerSecurity" -}}
{{- $custom := .root.Values.custom -}}
{{- with index $custom (printf "%s_csc" .key) | default $custom.default_csc }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Pod labels: the app label, <component>_podLabels and common_labels. */}}
{{- define "volcano-py.podLabels" -}}
{{- $custom := .root.Values.custom -}}
{{- $extra := index $custom (printf "%s_podLabels" .component) | default (dict) -}}
{{- toYaml (mustMerge (dict "app" .app) $extra ($custom.common_labels | default (dict))) -}}
{{- end -}}
