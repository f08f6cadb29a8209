package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Setting is one configuration key as an operator reads it: in --help and in
// docs/reference/config.md, both made from this list so they cannot disagree.
type Setting struct {
	Key     string // the YAML key; a nested one is dotted (namespaces.include)
	Meaning string // plain text: --help prints it as it is (no backticks: urfave/cli reads them)
}

// settings lists every key, in the order the shipped config.yaml has them.
var settings = []Setting{
	{"resctrlRoot", "where resctrl is mounted; refused if it is a symlink or another file system (the test simulator too, unless resctrlSimulator is true)"},
	{"resctrlSimulator", "true: resctrlRoot may be the project's resctrl simulator (a FUSE file system, test/resctrlsim), for demos and tests on hosts without RDT; never on a production node"},
	{"stateDir", "the registry of owned groups, per-pod locks, failures and outcome counts; keep it on tmpfs, like resctrl (both are gone after a reboot). Made 0700; an existing one is made 0700 if others may write to it, and refused if another user owns it or it is a shared sticky directory such as /tmp"},
	{"snapshotDir", "where each group's <group>.<life>.begin and .end snapshots go; empty disables them. No component of the path may be a symbolic link (name the real path, not /var/run/...)"},
	{"snapshotMaxAge", "finished groups' snapshots older than this are pruned"},
	{"snapshotMaxCount", "at most this many finished lives' snapshots are kept"},
	{"granularity", "pod: one group per pod; container: one per container"},
	{"noPod", "what a container with no pod gets (plain runc, podman run): container, a group of its own; skip, none"},
	{"namespaces.include", "Kubernetes namespaces to monitor; empty: every one (with a list, containers with no namespace are not monitored)"},
	{"namespaces.exclude", "Kubernetes namespaces not to monitor"},
	{"annotations.optIn", "when set, only containers whose annotation of this name is \"true\" are monitored"},
	{"annotations.optOut", "containers whose annotation of this name is \"true\" are not monitored"},
	{"annotations.optOutNamespaces", "namespaces whose pods may opt out; a lone * (the default): every pod's, also a container with no namespace; empty: none (the chart's default). A pod elsewhere that opts out is monitored anyway and counted (failures_total, reason annotation): on a node shared by tenants, list only the admin's namespaces so that no tenant hides from attribution"},
	{"podSelector", "a label selector a pod's labels must meet (app=web,tier!=cache,monitored,!canary, as kubectl -l takes it); empty: every pod. The NRI adapter only: hooks are not given pod labels"},
	{"failurePolicy", "open: a container that could not be placed starts anyway (logged, its pod recorded as pending); closed: it does not start, and the runtime shows why"},
	{"retention", "how long a pod's group outlives its last container, so that a container restarted within it keeps the pod's RMID"},
	{"rmidReclaim", "what a new pod does when the kernel has no free RMID: idle, the group idle longest (no live container, no running task) ends early, its .end snapshot written, counted as reclaimed, and the pod gets its RMID; none, idle groups keep their RMID for the whole retention window and the pod is pending until one ends"},
	{"hookBudget", "how long a hook call, or an NRI event, may take whatever resctrl does; keep it under the runtime's hook timeout (the installed hooks.d JSON passes --hookBudget, which wins)"},
	{"mbmAssignment", "who gives out the bandwidth counters on a node in the kernel's mbm_event mode (Linux 6.18+, AMD ABMC; nothing to decide elsewhere): kernel, the kernel at group creation while they last, kept until the group goes; policy, the housekeeping sweep, to pods annotated mbmAssignmentAnnotation first, then the busiest by LLC occupancy, taken back from idle pods at once"},
	{"mbmAssignmentAnnotation", "under mbmAssignment: policy, pods whose annotation of this name is \"true\" get bandwidth counters before the others; empty: by LLC occupancy alone"},
	{"mbmAssignmentNamespaces", "namespaces whose pods' mbmAssignmentAnnotation is honoured; a lone * (the default): every pod's; empty: none (the chart's default). A pod elsewhere that asks is ranked by LLC occupancy alone and counted (failures_total, reason annotation): on a node shared by tenants, list the namespaces allowed to take the few counters first"},
	{"mbmAssignmentHold", "under mbmAssignment: policy, a counter stays at least this long with the pod it was given to (a new counter starts from zero: handing them round would leave no pod a rate)"},
	{"events.enabled", "true: serve posts Kubernetes Events on a pod left pending (ResctrlMonPending), refused under failurePolicy closed (ResctrlMonRefused), placed late (ResctrlMonLateAssigned) or placed after being pending (ResctrlMonPlaced), once each; it needs the pod's service account token and the right to create Events (the chart's events.enabled). Never on a placement's path: serve reads the records"},
	{"events.rate", "at most this many Events a minute from the node (a burst of as many); more are dropped and counted (resctrl_mon_events_posted_total, outcome rate_limited)"},
	{"log", "syslog (journald reads it; when there is no syslog, <stateDir>/hook.log, kept under 1 MiB with one older generation, hook.log.1), stderr, or file:/path"},
	{"runtimeRoots", "where reconcile reads the OCI runtimes' state to learn which containers are alive (globs allowed)"},
	{"runtime", "the real OCI runtime (runc or crun) the runtime wrapper, resctrl-mon-runtime, execs"},
	{"runtimeHook", "the resctrl-mon-hook the runtime wrapper lists in a bundle's config.json (make install builds in its own LIBEXECDIR's)"},
}

// Settings lists every configuration key with its meaning (a copy: callers may sort it).
func Settings() []Setting { return slices.Clone(settings) }

// Env is the environment variable that sets the key, "" for a key set in the file only
// (lists and nested keys).
func (s Setting) Env() string {
	if !slices.Contains(Keys(), s.Key) {
		return ""
	}
	return EnvName(s.Key)
}

// Default is the key's default as YAML would write it: a list as its items joined by ", ",
// an empty string as "".
func (s Setting) Default() string {
	b, err := json.Marshal(Default())
	if err != nil {
		return fmt.Sprintf("(%v)", err) // cannot happen: Config is plain data
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	for _, part := range strings.Split(s.Key, ".") {
		m, _ := v.(map[string]any)
		v = m[part]
	}
	switch v := v.(type) {
	case string:
		if v == "" {
			return `""`
		}
		return shortDuration(v)
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = fmt.Sprint(e)
		}
		return strings.Join(out, ", ")
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// shortDuration writes a duration as a person would (5m0s is 5m, 24h0m0s 24h); anything
// else is returned as it is.
func shortDuration(s string) string {
	if _, err := time.ParseDuration(s); err != nil {
		return s
	}
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

// meaning is the key's meaning, "" for a key not in settings (a test keeps them in step).
func meaning(key string) string {
	i := slices.IndexFunc(settings, func(s Setting) bool { return s.Key == key })
	if i < 0 {
		return ""
	}
	return settings[i].Meaning
}
