package k8s

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// The values the chart passes into Kubernetes objects as they are (updateStrategy,
// podSecurityContext, affinity, tolerations, the resources): the API server drops a field it
// does not know, so a misspelt key deep inside one would install and do nothing. The schema
// mirrors each API type and refuses the key at install, naming where it is; a wrong enum value
// too.
func TestChartPassThroughBadValues(t *testing.T) {
	t.Parallel()
	const (
		nodeTerm = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
		nodePref = "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
		podTerm  = "affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
		antiPref = "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
		nodeAt   = "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0"
		podAt    = "/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/0"
		antiAt   = "/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/0"
	)
	extra := func(at, key string) string { return "at '" + at + "': additional properties '" + key + "' not allowed" }
	enum := func(at string) string { return "at '" + at + "': value must be one of" }
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"updateStrategy.typ=OnDelete"}, extra("/updateStrategy", "typ")},
		{[]string{"updateStrategy.type=Rolling"}, enum("/updateStrategy/type")},
		{[]string{"updateStrategy.rollingUpdate.maxUnavailble=2"}, extra("/updateStrategy/rollingUpdate", "maxUnavailble")},
		{[]string{"updateStrategy.rollingUpdate.maxSurge=two"}, "at '/updateStrategy/rollingUpdate/maxSurge'"},
		{[]string{"updateStrategy.rollingUpdate.maxUnavailable=150%"}, "at '/updateStrategy/rollingUpdate/maxUnavailable'"},

		{[]string{"podSecurityContext.runAsUsr=0"}, extra("/podSecurityContext", "runAsUsr")},
		{[]string{"podSecurityContext.seLinuxOptions.typ=spc_t"}, extra("/podSecurityContext/seLinuxOptions", "typ")},
		{[]string{"podSecurityContext.seccompProfile.type=RuntimeDefault", "podSecurityContext.seccompProfile.localProfile=x"}, extra("/podSecurityContext/seccompProfile", "localProfile")},
		{[]string{"podSecurityContext.seccompProfile.type=Default"}, enum("/podSecurityContext/seccompProfile/type")},
		{[]string{"podSecurityContext.seccompProfile.type=Localhost"}, "at '/podSecurityContext/seccompProfile': missing property 'localhostProfile'"},
		{[]string{"podSecurityContext.appArmorProfile.typ=Unconfined"}, extra("/podSecurityContext/appArmorProfile", "typ")},
		{[]string{"podSecurityContext.sysctls[0].nam=net.ipv4.ip_forward", "podSecurityContext.sysctls[0].value=1"}, extra("/podSecurityContext/sysctls/0", "nam")},
		{[]string{"podSecurityContext.windowsOptions.hostProces=true"}, extra("/podSecurityContext/windowsOptions", "hostProces")},
		{[]string{"podSecurityContext.fsGroupChangePolicy=OnMismatch"}, enum("/podSecurityContext/fsGroupChangePolicy")},
		{[]string{"podSecurityContext.supplementalGroupsPolicy=merge"}, enum("/podSecurityContext/supplementalGroupsPolicy")},
		{[]string{"podSecurityContext.seLinuxChangePolicy=Mount"}, enum("/podSecurityContext/seLinuxChangePolicy")},
		{[]string{"seLinuxOptions.levl=s0"}, extra("/seLinuxOptions", "levl")},

		{[]string{"affinity.nodeAfinity.x=1"}, extra("/affinity", "nodeAfinity")},
		{[]string{"affinity.nodeAffinity.requiredDuringScheduling.nodeSelectorTerms[0].matchFields[0].key=x"}, extra("/affinity/nodeAffinity", "requiredDuringScheduling")},
		{[]string{nodeTerm + ".matchExpressions[0].kye=rdt", nodeTerm + ".matchExpressions[0].operator=Exists"}, extra(nodeAt+"/matchExpressions/0", "kye")},
		{[]string{nodeTerm + ".matchExpressions[0].key=rdt", nodeTerm + ".matchExpressions[0].operator=Equals"}, enum(nodeAt + "/matchExpressions/0/operator")},
		{[]string{nodeTerm + ".matchFeilds[0].key=metadata.name"}, extra(nodeAt, "matchFeilds")},
		{[]string{nodePref + ".weight=10", nodePref + ".preferences.matchExpressions[0].key=x"}, extra("/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution/0", "preferences")},
		{[]string{podTerm + ".topologykey=kubernetes.io/hostname"}, extra(podAt, "topologykey")},
		{[]string{podTerm + ".topologyKey=kubernetes.io/hostname", podTerm + ".namespaceSelecter.matchLabels.a=b"}, extra(podAt, "namespaceSelecter")},
		{[]string{antiPref + ".weight=10", antiPref + ".podAffinityTerm.topologyKey=zone", antiPref + ".podAffinityTerm.labelSelector.matchLabel.app=x"}, extra(antiAt+"/podAffinityTerm/labelSelector", "matchLabel")},
		{[]string{antiPref + ".weight=10", antiPref + ".podAffinityTerm.topologyKey=zone", antiPref + ".podAffinityTerm.labelSelector.matchExpressions[0].key=app", antiPref + ".podAffinityTerm.labelSelector.matchExpressions[0].operator=Exist"}, enum(antiAt + "/podAffinityTerm/labelSelector/matchExpressions/0/operator")},

		{[]string{"tolerations[0].efect=NoSchedule"}, extra("/tolerations/0", "efect")},
		{[]string{"tolerations[0].tolerationSecs=30"}, extra("/tolerations/0", "tolerationSecs")},
		{[]string{"tolerations[0].effect=NoSchedul"}, enum("/tolerations/0/effect")},
		{[]string{"tolerations[0].operator=Equals"}, enum("/tolerations/0/operator")},

		{[]string{"resources.adapter.limts.memory=1Gi"}, extra("/resources/adapter", "limts")},
		{[]string{"resources.exporter.requests.memroy=64Mi"}, extra("/resources/exporter/requests", "memroy")},
		{[]string{"resources.reconcile.limits.cpu=1core"}, "at '/resources/reconcile/limits/cpu'"},
		{[]string{"resources.install.claims[0].nme=gpu"}, extra("/resources/install/claims/0", "nme")},
		{[]string{"uninstall.resources.request.cpu=10m"}, extra("/uninstall/resources", "request")},
	} {
		args := []string{"template", "rm", chartDir(t)}
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		_, err := helm(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: %v\nwant an error with %q", strings.Join(tc.set, " --set "), err, tc.want)
		}
	}
}

// passThroughValues sets every pass-through value to a full, correct example of its API
// type: every field of PodSecurityContext, all three kinds of affinity with every field of
// their terms, tolerations of each operator and effect, a rolling update by percentage.
const passThroughValues = `
updateStrategy:
  type: RollingUpdate
  rollingUpdate:
    maxUnavailable: 10%
    maxSurge: 0
podSecurityContext:
  runAsUser: 0
  runAsGroup: 0
  runAsNonRoot: false
  supplementalGroups: [1000, 2000]
  supplementalGroupsPolicy: Strict
  fsGroup: 2000
  fsGroupChangePolicy: OnRootMismatch
  sysctls:
    - name: net.ipv4.ping_group_range
      value: "0 2147483647"
  seccompProfile:
    type: Localhost
    localhostProfile: profiles/resctrl-mon.json
  appArmorProfile:
    type: RuntimeDefault
  seLinuxOptions:
    user: system_u
    role: system_r
    type: spc_t
    level: s0
  seLinuxChangePolicy: Recursive
  windowsOptions:
    gmsaCredentialSpecName: gmsa
    gmsaCredentialSpec: "{}"
    runAsUserName: ContainerUser
    hostProcess: false
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - key: node-role.kubernetes.io/control-plane
              operator: DoesNotExist
            - key: topology.kubernetes.io/zone
              operator: In
              values: [eu-1a, eu-1b]
          matchFields:
            - key: metadata.name
              operator: NotIn
              values: [node-7]
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        preference:
          matchExpressions:
            - key: feature.node.kubernetes.io/cpu-rdt.RDTMBM
              operator: Exists
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            app.kubernetes.io/name: node-feature-discovery
          matchExpressions:
            - key: app.kubernetes.io/component
              operator: In
              values: [worker]
        namespaceSelector:
          matchLabels:
            kubernetes.io/metadata.name: nfd
        namespaces: [nfd]
        topologyKey: kubernetes.io/hostname
        matchLabelKeys: [pod-template-hash]
        mismatchLabelKeys: [tenant]
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          labelSelector:
            matchExpressions:
              - key: app.kubernetes.io/name
                operator: NotIn
                values: [resctrl-mon]
          topologyKey: kubernetes.io/hostname
tolerations:
  - operator: Exists
  - key: node.kubernetes.io/unreachable
    operator: Exists
    effect: NoExecute
    tolerationSeconds: 300
  - key: dedicated
    operator: Equal
    value: monitoring
    effect: NoSchedule
  - key: spot
    value: "true"
    effect: PreferNoSchedule
resources:
  adapter:
    requests: {cpu: 20m, memory: 48Mi, ephemeral-storage: 1Mi}
    limits: {cpu: 0.5, memory: 256Mi}
  exporter:
    requests: {cpu: "1", memory: 64Mi}
    limits: {memory: 1Gi, hugepages-2Mi: 2Mi}
  reconcile:
    requests: {cpu: 100m, memory: "1e8"}
    limits: {memory: 200M}
  install:
    requests: {cpu: 5m, memory: 16Mi}
    limits: {memory: 100Mi}
uninstall:
  resources:
    requests: {cpu: 1m, memory: 8Mi}
    limits: {memory: 32Mi}
`

// A full, correct example of each pass-through value passes the schema and lands in the
// DaemonSets (and the cleanup's Job) exactly as given.
func TestChartPassThroughValues(t *testing.T) {
	t.Parallel()
	var vals map[string]any
	if err := yaml.Unmarshal([]byte(passThroughValues), &vals); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, []byte(passThroughValues), 0o600); err != nil {
		t.Fatal(err)
	}
	same := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s =\n%v\nwant\n%v", what, got, want)
		}
	}
	res := vals["resources"].(map[string]any)
	for mode, containers := range map[string]map[string]string{
		"nri":   {"nri-adapter": "adapter", "exporter": "exporter"},
		"hooks": {"reconcile": "reconcile", "exporter": "exporter", "install-hooks": "install"},
	} {
		objs := renderArgs(t, "template", "rm", chartDir(t), "--namespace", "monitoring", "-f", file, "--set", "mode="+mode)
		ds := objs["DaemonSet/rm-resctrl-mon"]
		same(mode+": updateStrategy", get(ds, "spec", "updateStrategy"), vals["updateStrategy"])
		spec := get(ds, "spec", "template", "spec")
		for name, key := range containers {
			c := container(spec, "containers", name)
			if c == nil {
				c = container(spec, "initContainers", name)
			}
			same(mode+": "+name+" resources", get(c, "resources"), res[key])
		}
		cleanup := get(objs["DaemonSet/rm-resctrl-mon-cleanup"], "spec", "template", "spec")
		job := get(objs["Job/rm-resctrl-mon-cleanup"], "spec", "template", "spec")
		for what, spec := range map[string]any{"DaemonSet": spec, "cleanup DaemonSet": cleanup, "cleanup Job": job} {
			same(mode+": "+what+" securityContext", get(spec, "securityContext"), vals["podSecurityContext"])
			same(mode+": "+what+" tolerations", get(spec, "tolerations"), vals["tolerations"])
			if what != "cleanup Job" { // the Job is placed by nodeSelector and tolerations alone
				same(mode+": "+what+" affinity", get(spec, "affinity"), vals["affinity"])
			}
		}
		for _, c := range append(list(cleanup, "initContainers"), list(cleanup, "containers")...) {
			same(mode+": cleanup "+get(c, "name").(string)+" resources", get(c, "resources"), get(vals, "uninstall", "resources"))
		}
		same(mode+": cleanup Job resources", get(job, "containers", "0", "resources"), get(vals, "uninstall", "resources"))
	}
}
