{{/*
The PrometheusRule's rules, as YAML lists that prometheusrule.yaml parses, drops the disabled
ones from and gives each alert its runbook_url (docs/operations/alerts.md, one section per
alert). Only metrics the exporter exports (docs/reference/metrics.md), `up` of the exporter's
scrape job; in mode nri the adapter's own metrics (its port nri-metrics, the same job), in mode
hooks kube-state-metrics' readiness of reconcile, which has no metrics of its own.
Alert templates ({{ $labels.x }}) are quoted out of Helm's reach with {{` `}}.
*/}}
{{- define "resctrl-mon.job" -}}
{{- .Values.prometheusRule.job | default (printf "%s/%s" .Release.Namespace (include "resctrl-mon.fullname" .)) -}}
{{- end -}}

{{- define "resctrl-mon.recordingRules" -}}
- record: namespace_pod:resctrl_mon_mbm_total_bytes:rate2m
  expr: sum by (node, namespace, pod) (rate(resctrl_mon_mbm_total_bytes_total[2m]))
- record: namespace_pod:resctrl_mon_mbm_local_bytes:rate2m
  expr: sum by (node, namespace, pod) (rate(resctrl_mon_mbm_local_bytes_total[2m]))
- record: namespace_pod:resctrl_mon_llc_occupancy_bytes:sum
  expr: sum by (node, namespace, pod) (resctrl_mon_llc_occupancy_bytes)
- record: node_namespace:resctrl_mon_mbm_total_bytes:rate2m
  expr: sum by (node, namespace) (namespace_pod:resctrl_mon_mbm_total_bytes:rate2m)
- record: node_namespace:resctrl_mon_llc_occupancy_bytes:sum
  expr: sum by (node, namespace) (namespace_pod:resctrl_mon_llc_occupancy_bytes:sum)
{{- end -}}

{{- define "resctrl-mon.alertRules" -}}
{{- $job := include "resctrl-mon.job" . -}}
- alert: ResctrlMonExporterDown
  expr: up{job="{{ $job }}", container!="nri-adapter"} == 0
  for: 5m
  labels:
    severity: warning
  annotations:
    summary: The resctrl-mon exporter cannot be scraped.
    description: {{`'{{ $labels.instance }} (node {{ $labels.node }}) has not answered a scrape for 5 minutes: no counters from that node.'`}}
- alert: ResctrlMonExporterAbsent
  expr: absent(up{job="{{ $job }}"})
  for: 15m
  labels:
    severity: warning
  annotations:
    summary: No resctrl-mon exporter is scraped.
    description: {{`'Prometheus has no target of the job {{ $labels.job }}: the PodMonitor is not selected, or no resctrl-mon pod runs.'`}}
- alert: ResctrlMonInventoryDown
  expr: resctrl_mon_inventory_up == 0
  for: 5m
  labels:
    severity: warning
  annotations:
    summary: resctrl-mon cannot read its state dir or resctrl.
    description: {{`'The exporter on {{ $labels.node }} ({{ $labels.instance }}) has read no groups for 5 minutes: resctrl is not mounted, or the state dir is missing or unreadable. No pod of that node is exported.'`}}
- alert: ResctrlMonReadErrors
  expr: increase(resctrl_mon_source_errors_total{source!="labels"}[10m]) > 0
  for: 10m
  labels:
    severity: warning
  annotations:
    summary: resctrl-mon keeps failing to read one of its sources.
    description: {{`'The exporter on {{ $labels.node }} ({{ $labels.instance }}) has failed reads of {{ $labels.source }} for 10 minutes and more.'`}}
- alert: ResctrlMonRMIDsRunningOut
  expr: 100 * resctrl_mon_rmids_used / (resctrl_mon_num_rmids > 0) > {{ .Values.prometheusRule.rmidsUsedPercent }}
  for: 15m
  labels:
    severity: warning
  annotations:
    summary: Few RMIDs are left for new pods.
    description: {{`'{{ $labels.node }} ({{ $labels.instance }}) uses {{ $value | printf "%.0f" }}% of its RMIDs: new pods will be pending (unmonitored).'`}}
- alert: ResctrlMonPodsPending
  expr: resctrl_mon_groups{state="pending"} > 0
  for: 10m
  labels:
    severity: warning
  annotations:
    summary: Pods run unmonitored, waiting for an RMID.
    description: {{`'{{ $value }} pod(s) on {{ $labels.node }} ({{ $labels.instance }}) have had no monitoring group for 10 minutes: no free RMID.'`}}
- alert: ResctrlMonPodsPlacedLate
  expr: sum without (action) (increase(resctrl_mon_outcomes_total{action=~"completed|moved"}[30m])) > 0
  labels:
    severity: info
  annotations:
    summary: Containers were placed after they started; their counters are a lower bound.
    description: {{`'On {{ $labels.node }} ({{ $labels.instance }}), {{ $labels.source }} placed tasks late in the last 30 minutes: their pods are late-assigned.'`}}
- alert: ResctrlMonPlacementFailures
  expr: increase(resctrl_mon_failures_total{reason=~"create|assign|other"}[10m]) > 0
  labels:
    severity: warning
  annotations:
    summary: resctrl-mon failed to place containers.
    description: {{`'{{ $labels.node }} ({{ $labels.instance }}) recorded {{ $labels.reason }} failures in the last 10 minutes.'`}}
- alert: ResctrlMonRefused
  expr: increase(resctrl_mon_failures_total{reason=~"identity|annotation"}[10m]) > 0
  labels:
    severity: warning
  annotations:
    summary: resctrl-mon refused a pod's identity or annotation.
    description: {{`'{{ $labels.node }} ({{ $labels.instance }}) recorded {{ $labels.reason }} refusals in the last 10 minutes.'`}}
- alert: ResctrlMonGroupsMissing
  expr: resctrl_mon_groups{state="missing"} > 0
  for: 15m
  labels:
    severity: warning
  annotations:
    summary: Monitoring groups disappeared and were not re-created.
    description: {{`'{{ $value }} pod(s) on {{ $labels.node }} ({{ $labels.instance }}) have had no group in resctrl for 15 minutes.'`}}
{{- if eq .Values.mode "nri" }}
{{- /* A node is known by any target of the job; its adapter is down unless it says it is
connected: disconnected, stopped (its scrape fails), or not scraped at all. */}}
- alert: ResctrlMonAdapterDown
  expr: group by (node) (up{job="{{ $job }}"}) unless on (node) (resctrl_mon_nri_connected{job="{{ $job }}"} == 1)
  for: 5m
  labels:
    severity: critical
  annotations:
    summary: The NRI adapter of a node is not connected to the runtime.
    description: {{`'The NRI adapter on {{ $labels.node }} has not said it is connected to the runtime for 5 minutes (disconnected, not answering its scrape, or not running): new containers on that node are not placed.'`}}
- alert: ResctrlMonAdapterNotSynchronised
  expr: (resctrl_mon_nri_last_synchronize_timestamp_seconds{job="{{ $job }}"} == 0) and on (job, instance) (resctrl_mon_nri_connected{job="{{ $job }}"} == 1)
  for: 10m
  labels:
    severity: warning
  annotations:
    summary: The NRI adapter is connected but its Synchronize has not finished.
    description: {{`'The NRI adapter on {{ $labels.node }} ({{ $labels.instance }}) has been connected for 10 minutes without finishing its Synchronize: the containers that ran before it are not all placed.'`}}
- alert: ResctrlMonAdapterEventsFailing
  expr: increase(resctrl_mon_nri_events_total{job="{{ $job }}", outcome=~"failed|past-budget|not-started"}[10m]) > 0
  labels:
    severity: warning
  annotations:
    summary: The NRI adapter failed events or answered them before their work was done.
    description: {{`'The NRI adapter on {{ $labels.node }} ({{ $labels.instance }}) answered {{ $labels.event }} events {{ $labels.outcome }} in the last 10 minutes.'`}}
{{- else }}
- alert: ResctrlMonAdapterDown
  expr: kube_pod_container_status_ready{namespace="{{ .Release.Namespace }}", pod=~"{{ include "resctrl-mon.fullname" . }}-[a-z0-9]{5}", container="reconcile"} == 0
  for: 5m
  labels:
    severity: critical
  annotations:
    summary: The container that places pods into their groups is not running.
    description: {{`'{{ $labels.container }} of {{ $labels.namespace }}/{{ $labels.pod }} has not been ready for 5 minutes: new containers on its node are not placed.'`}}
{{- end }}
{{- end -}}
