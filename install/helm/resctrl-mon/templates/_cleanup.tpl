{{/*
The cleanup of `helm uninstall` (cleanup-*.yaml): Helm hooks, so that it runs when Helm
uninstalls the release and at no other time (a pod restart, an eviction, a force delete, a
drain and `helm upgrade` never run a post-delete hook). See docs/operations/uninstall.md.
*/}}
{{- define "resctrl-mon.cleanupName" -}}
{{- printf "%s-cleanup" (include "resctrl-mon.fullname" . | trunc 55 | trimSuffix "-") -}}
{{- end -}}

{{/*
post-delete, not pre-delete: the DaemonSet's adapter or reconcile loop must be gone (or going:
the cleanup waits for them) before the groups are released, or they make groups again behind
the release. Lower weights are made first; Helm waits for the Job (weight 0) alone. A cleanup
that succeeded leaves nothing. When the Job fails, Helm deletes the hooks made before it (they
succeeded) and keeps the Job, for its log; the node that refused is finished by hand.
*/}}
{{- define "resctrl-mon.cleanupHook" -}}
helm.sh/hook: post-delete
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}

{{- define "resctrl-mon.cleanupLabels" -}}
{{ include "resctrl-mon.labels" . }}
app.kubernetes.io/component: cleanup
{{- end -}}

{{- define "resctrl-mon.cleanupSelectorLabels" -}}
{{ include "resctrl-mon.selectorLabels" . }}
app.kubernetes.io/component: cleanup
{{- end -}}

{{/*
The top directory of each runtime config (/etc for /etc/containerd/config.toml), once: the
cleanup reads them there, read-only. Not the configs' own directories: a hostPath that is not
on the node is made by the runtime, and /etc/crio made on a containerd node would stay.
*/}}
{{- define "resctrl-mon.runtimeConfigRoots" -}}
{{- $roots := list -}}
{{- range without (default list .Values.uninstall.runtimeConfigs) "" -}}
{{- if not (regexMatch "^/[^/]+/[^/]" .) -}}
{{- fail (printf "uninstall.runtimeConfigs: %q: want an absolute path below a top directory (/etc/...)" .) -}}
{{- end -}}
{{- $roots = append $roots (regexReplaceAll "^(/[^/]+)/.*$" . "${1}") -}}
{{- end -}}
{{- toJson ($roots | uniq) -}}
{{- end -}}
