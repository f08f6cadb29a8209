{{/*
Whether a Prometheus run by the Operator selects an object of the chart (the PodMonitor, the
PrometheusRule), for NOTES: a PodMonitor or PrometheusRule that no Prometheus selects is never
scraped or loaded, and nothing else says so. Called with (dict "root" $ "selector"
"ruleSelector" "nsSelector" "ruleNamespaceSelector" "labels" <the object's labels>
"namespace" <its namespace>); it prints "yes", "no", or nothing where it cannot tell: no API
server (helm template, --dry-run) or no Prometheus CRD. As the Operator reads them: a null
selector selects nothing, an empty one everything; a null namespace selector only the
Prometheus' own namespace. matchExpressions are not evaluated here: a selector with any is
taken as selecting (NOTES would rather say nothing than something false).
*/}}
{{- define "resctrl-mon.prometheusSelects" -}}
{{- $root := .root -}}
{{- if $root.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/Prometheus" -}}
{{- $proms := (lookup "monitoring.coreos.com/v1" "Prometheus" "" "").items | default list -}}
{{- $ns := lookup "v1" "Namespace" "" .namespace -}}
{{- $nsLabels := merge (dict "kubernetes.io/metadata.name" .namespace) (dig "metadata" "labels" dict $ns) -}}
{{- $found := "" -}}
{{- if $proms -}}
{{- $found = "no" -}}
{{- range $p := $proms -}}
{{- $sel := dig "spec" $.selector nil $p -}}
{{- $nsSel := dig "spec" $.nsSelector nil $p -}}
{{- $ok := include "resctrl-mon.selectorMatches" (dict "selector" $sel "labels" $.labels) -}}
{{- if $nsSel -}}
{{- $ok = and $ok (include "resctrl-mon.selectorMatches" (dict "selector" $nsSel "labels" $nsLabels)) -}}
{{- else if kindIs "invalid" $nsSel -}}
{{- $ok = and $ok (eq $p.metadata.namespace $.namespace) -}}
{{- end -}}
{{- if $ok }}{{ $found = "yes" }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $found -}}
{{- end -}}
{{- end -}}

{{/* "true" when the label selector (null: selects nothing) matches the labels, else "". */}}
{{- define "resctrl-mon.selectorMatches" -}}
{{- $sel := .selector -}}
{{- if not (kindIs "invalid" $sel) -}}
{{- $ok := true -}}
{{- range $k, $v := (get $sel "matchLabels" | default dict) -}}
{{- if ne (toString (get $.labels $k)) (toString $v) }}{{ $ok = false }}{{ end -}}
{{- end -}}
{{- if $ok }}true{{ end -}}
{{- end -}}
{{- end -}}
