{{/*
The PrometheusRule's rules, as YAML lists that prometheusrule.yaml parses, drops the disabled
ones from and gives each alert its runbook_url (docs/operations/alerts.md, one section per
alert). Only metrics the exporter exports (docs/reference/metrics.md), `up` of the exporter's
scrape job, and kube-state-metrics' container readiness for the container that places.
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
  expr: up{job="{{ $job }}"} == 0
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
- alert: ResctrlMonAdapterDown
  expr: kube_pod_container_status_ready{namespace="{{ .Release.Namespace }}", pod=~"{{ include "resctrl-mon.fullname" . }}-[a-z0-9]{5}", container="{{ if eq .Values.mode "nri" }}nri-adapter{{ else }}reconcile{{ end }}"} == 0
  for: 5m
  labels:
    severity: critical
  annotations:
    summary: The container that places pods into their groups is not running.
    description: {{`'{{ $labels.container }} of {{ $labels.namespace }}/{{ $labels.pod }} has not been ready for 5 minutes: new containers on its node are not placed.'`}}
{{- end -}}
