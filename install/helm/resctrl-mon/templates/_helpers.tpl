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
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (include "resctrl-mon.tag" .) -}}
{{- end -}}
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
The container's security context. No container is privileged; each drops every capability:
resctrl's files and the state dir are root's, and a root process moves any task into a resctrl
group without a capability, so root (uid 0) with none is enough (docs/install/security.md).
appArmorProfile is set only when a type is named: kubelet refuses a pod that names one, even
RuntimeDefault, on a node without AppArmor; unset, the runtime applies its default where
AppArmor is on. Before Kubernetes 1.30 the field does not exist: the pod's annotations carry it
(resctrl-mon.appArmorAnnotations).
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
{{- with .Values.appArmorProfile }}
{{- if and .type (include "resctrl-mon.appArmorField" $) }}
appArmorProfile:
  type: {{ .type }}
  {{- if eq .type "Localhost" }}
  localhostProfile: {{ required "appArmorProfile.localhostProfile: needed with type Localhost" .localhostProfile }}
  {{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* "true" when the API server knows securityContext.appArmorProfile (GA in 1.30). */}}
{{- define "resctrl-mon.appArmorField" -}}
{{- if semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version }}true{{ end -}}
{{- end -}}

{{/* Before 1.30, the AppArmor profile as the deprecated per-container annotation. */}}
{{- define "resctrl-mon.appArmorAnnotations" -}}
{{- $t := .root.Values.appArmorProfile.type -}}
{{- if and $t (not (include "resctrl-mon.appArmorField" .root)) -}}
{{- $v := get (dict "RuntimeDefault" "runtime/default" "Unconfined" "unconfined" "Localhost" (printf "localhost/%s" .root.Values.appArmorProfile.localhostProfile)) $t -}}
{{- $lines := list -}}
{{- range .containers }}{{ $lines = append $lines (printf "container.apparmor.security.beta.kubernetes.io/%s: %s" . $v) }}{{ end -}}
{{- join "\n" $lines -}}
{{- end -}}
{{- end -}}

{{/*
Where the pod mounts the node's resctrl root: under /host, as the cgroup tree. AppArmor
matches a path as the confined task sees it, and the runtimes' default profiles (containerd's
cri-containerd.apparmor.d, containers/common's for CRI-O and podman) deny writes below
/sys/fs/[^c]* (a glob), so /sys/fs/resctrl inside the container could not be written; /host/... is
named by none of their rules (test/k8s/apparmor_chart_test.go checks it).
*/}}
{{- define "resctrl-mon.resctrlPath" -}}
{{- printf "/host%s" (clean .Values.config.resctrlRoot) -}}
{{- end -}}

{{/*
What every container that reads or writes groups mounts: resctrl (with HostToContainer, a
resctrl mounted on the node after the pod started appears in it), the shared state and
snapshot dirs at the node's paths, and the node's cgroup tree (read-only; found through
mountinfo wherever it is mounted) for pressure. With readOnly, resctrl, the state and the
snapshots are mounted read-only (the exporter: a scrape writes nothing).
*/}}
{{- define "resctrl-mon.mounts" -}}
{{- $v := .root.Values }}
{{- $ro := .readOnly -}}
- {name: config, mountPath: /etc/resctrl-mon, readOnly: true}
- {name: resctrl, mountPath: {{ include "resctrl-mon.resctrlPath" .root }}
  {{- with $v.resctrlMountPropagation }}, mountPropagation: {{ . }}{{ end }}{{ if $ro }}, readOnly: true{{ end }}}
- {name: state, mountPath: {{ $v.config.stateDir }}{{ if $ro }}, readOnly: true{{ end }}}
{{- $snap := $v.config.snapshotDir }}
{{- if and $snap (not (hasPrefix (printf "%s/" $v.config.stateDir) $snap)) }}
- {name: snapshots, mountPath: {{ $snap }}{{ if $ro }}, readOnly: true{{ end }}}
{{- end }}
- {name: cgroup, mountPath: /host/sys/fs/cgroup, readOnly: true}
{{- end -}}

{{/*
The node's directories that hold what install-hooks puts there, under /host. Only the init
container that installs (and the uninstall Job) mounts them: a long-running container with a
writable mount of a directory the runtime executes from is one exploit away from every
container on the node. A directory named twice (the wrapper beside the hook) is mounted once.
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

{{/*
The exporter's --listen: exporter.host, or the node's address from the downward API
(HOST_IP, which kubelet expands in args). Always bracketed: Go takes [1.2.3.4]:p as well as
[::1]:p, and an IPv6 node address needs the brackets.
*/}}
{{- define "resctrl-mon.listen" -}}
{{- include "resctrl-mon.listenOn" (dict "root" . "port" .Values.exporter.port) -}}
{{- end -}}

{{/*
An address on exporter.host at another port (the adapter's --health-listen, nri.health.port):
one value says where the pod's servers bind.
*/}}
{{- define "resctrl-mon.listenOn" -}}
{{- $h := .root.Values.exporter.host | default "$(HOST_IP)" -}}
{{- printf "[%s]:%v" (trimSuffix "]" (trimPrefix "[" $h)) .port -}}
{{- end -}}

{{/*
The exporter's probes (with port: the adapter's), on path: where it listens (a host-network
pod's own address is the node's, so no host is named for the default), over HTTPS with a TLS
web config; with basic auth, which kubelet cannot send, only the port.
*/}}
{{- define "resctrl-mon.probe" -}}
{{- $e := .root.Values.exporter -}}
{{- $port := .port | default $e.port -}}
{{- $host := trimSuffix "]" (trimPrefix "[" $e.host) -}}
{{- if and $e.webConfig.secretName $e.webConfig.basicAuth -}}
tcpSocket: {port: {{ $port }}{{ if and $host (not (has $host (list "0.0.0.0" "::"))) }}, host: {{ $host | quote }}{{ end }}}
{{- else -}}
httpGet:
  path: {{ .path }}
  port: {{ $port }}
  {{- if and $host (not (has $host (list "0.0.0.0" "::"))) }}
  host: {{ $host | quote }}
  {{- end }}
  {{- if and $e.webConfig.secretName $e.webConfig.tls }}
  scheme: HTTPS
  {{- end }}
{{- end }}
{{- end -}}

{{/*
The config's data (templates/configmap.yaml), and the ConfigMap's name: the release's name and
a hash of that data, so that each content has its own ConfigMap (see configmap.yaml).
*/}}
{{- define "resctrl-mon.configData" }}
  # What the pod's own processes read: resctrl where the pod mounts it (/host + the node's
  # path, out of the runtimes' default AppArmor deny rules); every other path is the node's.
  config.yaml: |
    {{- toYaml (merge (dict "resctrlRoot" (include "resctrl-mon.resctrlPath" .) "events" .Values.events) (deepCopy .Values.config)) | nindent 4 }}
  {{- if or (eq .Values.mode "hooks") .Values.wrapper.enabled }}
  # What the hook and the wrapper installed on the node read: the node's paths, a log a process
  # outside any pod can write, and the hook where install-hooks put it.
  hook-config.yaml: |
    {{- toYaml (merge (dict "log" .Values.hooks.log "runtimeHook" .Values.hooks.hookPath) (deepCopy .Values.config)) | nindent 4 }}
  {{- end }}
{{- end -}}

{{- define "resctrl-mon.configName" -}}
{{- printf "%s-%s" (include "resctrl-mon.fullname" . | trunc 52 | trimSuffix "-") (include "resctrl-mon.configData" . | sha256sum | trunc 10) -}}
{{- end -}}

{{/*
The nodes the DaemonSets run on: nodeSelector, and the RDT label (nodeSelection.rdtLabel) when
set. A node whose CPU has no RDT monitoring has no /sys/fs/resctrl (the kernel makes it only
where it found RDT), so the pod could not even mount its resctrl root: it would stay
ContainerCreating and stall every rolling update behind it (maxUnavailable). Selecting by the
label node-feature-discovery sets keeps such nodes out.
*/}}
{{- define "resctrl-mon.nodeSelector" -}}
{{- $sel := deepCopy (.Values.nodeSelector | default dict) -}}
{{- with .Values.nodeSelection.rdtLabel -}}
{{- $_ := set $sel . "true" -}}
{{- end -}}
{{- toYaml $sel -}}
{{- end -}}

{{/*
Where install-hooks looks for the runtime the wrapper runs (config.runtime), read-only: its
directory, and /usr/bin and /usr/sbin, where distributions put runc and crun, so that a
missing runtime is named with the one the node has. Directories install-hooks already mounts
are left out.
*/}}
{{- define "resctrl-mon.runtimeDirs" -}}
{{- $mounted := list (dir .Values.hooks.hookPath) (dir .Values.hooks.configPath) (dir .Values.wrapper.path) .Values.hooks.hooksDir -}}
{{- $dirs := list -}}
{{- range list (dir .Values.config.runtime) "/usr/bin" "/usr/sbin" -}}
{{- if and (not (has . $mounted)) (not (has . $dirs)) -}}
{{- $dirs = append $dirs . -}}
{{- end -}}
{{- end -}}
{{- toYaml $dirs -}}
{{- end -}}

