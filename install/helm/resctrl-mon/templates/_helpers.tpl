{{/* Names, as every chart has them. */}}
{{- define "resctrl-mon.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "resctrl-mon.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "resctrl-mon.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "resctrl-mon.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "resctrl-mon.selectorLabels" -}}
app.kubernetes.io/name: {{ include "resctrl-mon.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "resctrl-mon.labels" -}}
{{ include "resctrl-mon.selectorLabels" . }}
app.kubernetes.io/version: {{ include "resctrl-mon.tag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "resctrl-mon.tag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{- define "resctrl-mon.image" -}}
{{- printf "%s:%s" .Values.image.repository (include "resctrl-mon.tag" .) -}}
{{- end -}}

{{/*
The directory a runtime root names: a trailing "/*" (one runc root per containerd namespace)
mounts its parent; any other glob is refused, since the chart cannot mount what it matches.
*/}}
{{- define "resctrl-mon.globDir" -}}
{{- $d := trimSuffix "/*" . -}}
{{- if or (contains "*" $d) (contains "?" $d) (contains "[" $d) -}}
{{- fail (printf "config.runtimeRoots: %q: the chart mounts a directory or DIR/*, not other globs" .) -}}
{{- end -}}
{{- $d -}}
{{- end -}}

{{/*
The container's security context. No container is privileged; each drops every capability
and adds back only what its mode was measured to need (docs/install/kubernetes.md says what
and why): resctrl's files and the state dir are root's, and a root process moves any task
into a resctrl group without a capability, so root (uid 0) with none is enough.
*/}}
{{- define "resctrl-mon.securityContext" -}}
privileged: false
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsUser: 0
runAsGroup: 0
capabilities:
  drop: [ALL]
  {{- with .Values.extraCapabilities }}
  add: {{ toJson . }}
  {{- end }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
What every container that reads or writes groups mounts: resctrl (with HostToContainer, a
resctrl mounted on the node after the pod started appears in it), the shared state and
snapshot dirs at the node's paths, and the node's cgroup tree (read-only; found through
mountinfo wherever it is mounted) for pressure.
*/}}
{{- define "resctrl-mon.mounts" -}}
- {name: config, mountPath: /etc/resctrl-mon, readOnly: true}
- {name: resctrl, mountPath: {{ .Values.config.resctrlRoot }}
  {{- with .Values.resctrlMountPropagation }}, mountPropagation: {{ . }}{{ end }}}
- {name: state, mountPath: {{ .Values.config.stateDir }}}
{{- $snap := .Values.config.snapshotDir }}
{{- if and $snap (not (hasPrefix (printf "%s/" .Values.config.stateDir) $snap)) }}
- {name: snapshots, mountPath: {{ $snap }}}
{{- end }}
- {name: cgroup, mountPath: /host/sys/fs/cgroup, readOnly: true}
{{- end -}}

{{/*
The preStop of the container that places (the adapter, or reconcile): when the pod stops
because the chart is uninstalled (its DaemonSet is gone), take off the node what the chart put
there (mode hooks: the hooks.d JSON, the hook, its config) and end every group resctrl-mon owns.
A pod replaced, upgraded or drained finds its DaemonSet and leaves everything to the next.
*/}}
{{- define "resctrl-mon.leave" -}}
- /usr/local/bin/resctrl-mon
- --config=/etc/resctrl-mon/config.yaml
- host
- uninstall
- --unless-daemonset={{ .Release.Namespace }}/{{ include "resctrl-mon.fullname" . }}
{{- with .Values.kubernetesAPI }}
- --api-server={{ . }}
{{- end }}
- --release-groups
- --host-root=/host
- --hook-path={{ .Values.hooks.hookPath }}
- --hooks-dir={{ .Values.hooks.hooksDir }}
- --config-path={{ .Values.hooks.configPath }}
{{- end -}}

{{/*
The node's directories that hold what install-hooks puts there, under /host. A directory
named twice (the wrapper beside the hook) is mounted once.
*/}}
{{- define "resctrl-mon.hostFileMounts" -}}
- {name: host-hook, mountPath: /host{{ dir .Values.hooks.hookPath }}}
{{- if eq .Values.mode "hooks" }}
- {name: host-hooksd, mountPath: /host{{ .Values.hooks.hooksDir }}}
{{- end }}
{{- if ne (dir .Values.hooks.configPath) (dir .Values.hooks.hookPath) }}
- {name: host-config, mountPath: /host{{ dir .Values.hooks.configPath }}}
{{- end }}
{{- if and .Values.wrapper.enabled (ne (dir .Values.wrapper.path) (dir .Values.hooks.hookPath)) (ne (dir .Values.wrapper.path) (dir .Values.hooks.configPath)) }}
- {name: host-wrapper, mountPath: /host{{ dir .Values.wrapper.path }}}
{{- end }}
{{- end -}}
