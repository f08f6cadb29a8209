package k8s

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// On OpenShift every pod the chart makes is admitted by a SecurityContextConstraints its
// service account may use, and no SCC allows more than those pods ask: a pod the SCC would
// refuse (a volume type, a capability, a privileged container, escalation, host IPC) fails
// here. The cleanup's SCC is a post-delete hook made before the cleanup's pods (the
// release's own objects are gone by then).
func TestChartOpenShiftSCC(t *testing.T) {
	t.Parallel()
	if _, ok := render(t)["SecurityContextConstraints/monitoring-rm-resctrl-mon"]; ok {
		t.Error("an SCC without openshift.scc")
	}
	for _, mode := range []string{"mode=nri", "mode=hooks", "mode=nri,wrapper.enabled=true"} {
		objs := render(t, mode, "openshift.scc=true", "uninstall.enabled=true")
		sccs := map[string]obj{} // by the service account user it admits
		for name, o := range objs {
			if !strings.HasPrefix(name, "SecurityContextConstraints/") {
				continue
			}
			users, _ := o["users"].([]any)
			if len(users) != 1 {
				t.Errorf("%s: %s admits %v, want one service account", mode, name, users)
			}
			for _, u := range users {
				sccs[fmt.Sprint(u)] = o
			}
		}
		for name, o := range objs {
			if strings.HasPrefix(name, "ServiceAccount/") {
				user := "system:serviceaccount:monitoring:" + strings.TrimPrefix(name, "ServiceAccount/")
				if _, ok := sccs[user]; !ok {
					t.Errorf("%s: no SCC admits the service account %s", mode, name)
				}
			}
			spec, ok := get(o, "spec", "template", "spec").(map[string]any)
			if !ok {
				continue
			}
			user := "system:serviceaccount:monitoring:" + fmt.Sprint(spec["serviceAccountName"])
			scc, ok := sccs[user]
			if !ok {
				t.Errorf("%s: %s runs as %s, which no SCC admits", mode, name, user)
				continue
			}
			for _, why := range sccRefuses(scc, spec) {
				t.Errorf("%s: %s would be refused by its SCC: %s", mode, name, why)
			}
			if hook := hookOf(o); hook.phase != "" {
				if h := hookOf(scc); h.phase != hook.phase || h.weight >= hook.weight {
					t.Errorf("%s: %s is a %s hook (weight %d), its SCC %+v: want the same hook, made before it", mode, name, hook.phase, hook.weight, h)
				}
			}
		}
	}
}

type hook struct {
	phase  string
	weight int
}

func hookOf(o obj) hook {
	var h hook
	h.phase, _ = get(o, "metadata", "annotations", "helm.sh/hook").(string)
	if w, ok := get(o, "metadata", "annotations", "helm.sh/hook-weight").(string); ok {
		h.weight, _ = strconv.Atoi(w)
	}
	return h
}

// sccRefuses is what of a pod spec the SCC's admission refuses (the fields this chart's
// pods could ask for).
func sccRefuses(scc obj, spec map[string]any) []string {
	var why []string
	allowed := func(key string) bool { b, _ := scc[key].(bool); return b }
	for field, key := range map[string]string{"hostPID": "allowHostPID", "hostNetwork": "allowHostNetwork", "hostIPC": "allowHostIPC"} {
		if b, _ := spec[field].(bool); b && !allowed(key) {
			why = append(why, field)
		}
	}
	var volumes []string
	for _, v := range scc["volumes"].([]any) {
		volumes = append(volumes, fmt.Sprint(v))
	}
	vs, _ := spec["volumes"].([]any)
	for _, v := range vs {
		for kind := range v.(map[string]any) {
			if kind != "name" && !slices.Contains(volumes, kind) {
				why = append(why, "volume type "+kind)
			}
		}
	}
	for _, key := range []string{"initContainers", "containers"} {
		cs, _ := spec[key].([]any)
		for _, c := range cs {
			c := c.(map[string]any)
			sc, _ := c["securityContext"].(map[string]any)
			if b, _ := sc["privileged"].(bool); b && !allowed("allowPrivilegedContainer") {
				why = append(why, fmt.Sprint(c["name"], ": privileged"))
			}
			if b, ok := sc["allowPrivilegeEscalation"].(bool); (!ok || b) && !allowed("allowPrivilegeEscalation") {
				why = append(why, fmt.Sprint(c["name"], ": privilege escalation not turned off"))
			}
			if add := get(sc, "capabilities", "add"); add != nil && len(add.([]any)) > 0 {
				why = append(why, fmt.Sprint(c["name"], ": capabilities added ", add))
			}
			if b, _ := sc["readOnlyRootFilesystem"].(bool); !b && allowed("readOnlyRootFilesystem") {
				why = append(why, fmt.Sprint(c["name"], ": a writable root file system"))
			}
		}
	}
	return why
}
