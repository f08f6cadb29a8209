// Package config is the one configuration of resctrl-mon, shared by the hook, the NRI adapter
// and the CLI: a YAML file (DefaultPath, which the build sets, or --config), then environment
// variables (RESCTRL_MON_ and the key in upper snake case: see EnvName), then flags, each
// overriding the one before. A bad value is an error naming its key.
package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// DefaultPath is where the config file is looked for when none is named. A missing file at
// the default path is fine (defaults apply); a missing file that was named is an error.
//
// It is a variable only so that the build can set it: `make install` links the binaries with
// `-ldflags -X github.com/resctrl-mon/resctrl-mon/lib/config.DefaultPath=$(CONFDIR)/config.yaml`,
// so they read the config where that install put it. Nothing assigns it at run time.
var DefaultPath = "/etc/resctrl-mon/config.yaml"

// Version is this build's version (`git describe`, or make's VERSION), set by the build:
// `-X github.com/resctrl-mon/resctrl-mon/lib/config.Version=$(VERSION)`.
var Version = "dev"

// DefaultHookPath is the resctrl-mon-hook the runtime wrapper adds to a bundle when the
// config key runtimeHook is not set. Like DefaultPath it is a variable only so that the build
// can set it: `make install` links the binaries with
// `-X github.com/resctrl-mon/resctrl-mon/lib/config.DefaultHookPath=$(LIBEXECDIR)/resctrl-mon-hook`.
var DefaultHookPath = "/usr/local/libexec/oci/hooks.d/resctrl-mon-hook"

// ConfigEnv names the config file when no --config is given: the runtime wrapper takes no
// flags of its own (every flag is the real runtime's), so this is its only way to a config
// other than DefaultPath. Every binary honours it, so the hooks the wrapper adds read the
// same file.
const ConfigEnv = "RESCTRL_MON_CONFIG"

// Granularity says what gets its own group.
type Granularity string

const (
	PerPod       Granularity = "pod"       // all containers of a pod share one group (default)
	PerContainer Granularity = "container" // every container has its own group
)

// NoPodPolicy says what happens to a container with no pod identity (plain runc, podman run).
type NoPodPolicy string

const (
	NoPodOwnGroup NoPodPolicy = "container" // it gets a group of its own (default)
	NoPodSkip     NoPodPolicy = "skip"      // it is not monitored
)

// MBMAssignment says who decides which groups hold the few bandwidth counters of the
// kernel's mbm_event mode (Linux ≥ 6.18, AMD ABMC); other modes have nothing to decide.
type MBMAssignment string

const (
	// MBMAssignKernel leaves it to the kernel (default): counters go to groups at mkdir while
	// they last and stay until rmdir. It is the behaviour of a node without resctrl-mon, so
	// turning resctrl-mon on changes nothing an operator did not ask for.
	MBMAssignKernel MBMAssignment = "kernel"
	// MBMAssignPolicy: the housekeeping sweep gives counters to the pods that ask (the
	// mbmAssignmentAnnotation) first, then to the busiest by LLC occupancy, takes them back
	// from idle pods at once, and never from a pod that got one less than mbmAssignmentHold
	// ago.
	MBMAssignPolicy MBMAssignment = "policy"
)

// Config is the whole configuration. Field names are the YAML keys.
type Config struct {
	// ResctrlRoot is where resctrl is mounted.
	ResctrlRoot string `json:"resctrlRoot"`
	// ResctrlSimulator lets ResctrlRoot be the project's resctrl simulator (test/resctrlsim),
	// for demos and tests on hosts without RDT. Off, only the kernel's resctrl is accepted:
	// a product binary must not write its groups into a FUSE file system that signs itself
	// as the simulator (resctrlfs.MountFor).
	ResctrlSimulator bool `json:"resctrlSimulator"`
	// StateDir holds the registry of owned groups and the per-pod locks. It should be on
	// tmpfs: resctrl is in memory too, and both are gone after a reboot.
	StateDir string `json:"stateDir"`
	// SnapshotDir receives <group>.<life>.begin and .end (see lib/snapshot); empty disables them.
	SnapshotDir      string   `json:"snapshotDir"`
	SnapshotMaxAge   Duration `json:"snapshotMaxAge"`
	SnapshotMaxCount int      `json:"snapshotMaxCount"`
	// Granularity: "pod" or "container".
	Granularity Granularity `json:"granularity"`
	// NoPod: "container" or "skip".
	NoPod NoPodPolicy `json:"noPod"`
	// Namespaces filters pods by Kubernetes namespace.
	Namespaces Filter `json:"namespaces"`
	// Annotations opt containers in or out.
	Annotations AnnotationFilter `json:"annotations"`
	// PodSelector selects pods by their labels (see Selector), as the NRI runtime sends
	// them; "" selects every pod. Only the NRI adapter is given pod labels: hooks ignore it.
	PodSelector string `json:"podSelector"`
	// FailurePolicy: "open" or "closed".
	FailurePolicy FailurePolicy `json:"failurePolicy"`
	// Retention is how long a pod's group outlives its last container, so that a
	// container restarted within it keeps the pod's RMID.
	Retention Duration `json:"retention"`
	// RMIDReclaim: "idle" or "none" (see RMIDReclaim).
	RMIDReclaim RMIDReclaim `json:"rmidReclaim"`
	// HookBudget is how long a hook call may take, whatever resctrl or its input does: it
	// must end inside the runtime's own hook timeout (hooks.d "timeout"), or the runtime
	// kills it and, for createRuntime, fails the container whatever the failure policy.
	HookBudget Duration `json:"hookBudget"`
	// MBMAssignment: "kernel" or "policy" (see MBMAssignment).
	MBMAssignment MBMAssignment `json:"mbmAssignment"`
	// MBMAssignmentAnnotation names the annotation ("true") of the pods that get bandwidth
	// counters first under the policy; "" ranks every pod by LLC occupancy alone.
	MBMAssignmentAnnotation string `json:"mbmAssignmentAnnotation"`
	// MBMAssignmentHold is how long a counter stays with the pod it was given to before the
	// policy may hand it to a busier one: a counter given starts from zero, so handing them
	// round at every sweep would leave no pod with a useful rate.
	MBMAssignmentHold Duration `json:"mbmAssignmentHold"`
	// Log is "syslog", "stderr" or "file:/path".
	Log string `json:"log"`
	// RuntimeRoots are where reconcile reads the OCI runtimes' state to learn which
	// containers are alive (runc, containerd's runc shims, crun); globs allowed.
	RuntimeRoots []string `json:"runtimeRoots"`
	// Runtime is the real OCI runtime (runc, crun) that resctrl-mon-runtime, the runtime
	// wrapper, execs with its own command line.
	Runtime string `json:"runtime"`
	// RuntimeHook is the resctrl-mon-hook the wrapper lists in a bundle's config.json.
	RuntimeHook string `json:"runtimeHook"`

	// Who may use the pod-set annotations (see Honoured): a pod's author sets them, so on a
	// node shared by tenants the admin says where each is believed.

	// MBMAssignmentNamespaces lists the namespaces whose pods' mbmAssignmentAnnotation is
	// honoured; "*" (the default): every namespace's; empty: none.
	MBMAssignmentNamespaces []string `json:"mbmAssignmentNamespaces"`

	// Events: Kubernetes Events on a pod that is left pending, refused, placed late or placed
	// after all, posted by `serve` (lib/podevents).
	Events Events `json:"events"`
}

// Events says whether `serve` posts Events on pods, and how many at most.
type Events struct {
	// Enabled needs the pod's service account token and the right to create Events (the
	// chart's events.enabled gives both); off by default, for a `serve` outside a pod has
	// neither.
	Enabled bool `json:"enabled"`
	// Rate is how many Events a minute the node posts at most (a burst of as many); more
	// are dropped and counted.
	Rate int `json:"rate"`
}

// Filter includes or excludes names. An empty Include means everything.
type Filter struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// AnnotationFilter opts containers in or out by annotation.
type AnnotationFilter struct {
	// OptIn, when set, monitors only containers whose annotation of that name is "true".
	OptIn string `json:"optIn"`
	// OptOut skips containers whose annotation of that name is "true".
	OptOut string `json:"optOut"`
	// OptOutNamespaces lists the namespaces whose pods' OptOut is honoured; "*" (the
	// default): every namespace's; empty: none. A pod elsewhere that opts out is monitored
	// anyway (and counted).
	OptOutNamespaces []string `json:"optOutNamespaces"`
}

// Default is the configuration before any file, environment or flag.
func Default() Config {
	return Config{
		ResctrlRoot:      "/sys/fs/resctrl",
		StateDir:         "/run/resctrl-mon",
		SnapshotDir:      "/run/resctrl-mon/snapshots",
		SnapshotMaxAge:   Duration(24 * time.Hour),
		SnapshotMaxCount: 10000,
		Granularity:      PerPod,
		NoPod:            NoPodOwnGroup,
		FailurePolicy:    FailOpen,
		Retention:        Duration(5 * time.Minute),
		RMIDReclaim:      RMIDReclaimIdle,
		HookBudget:       Duration(8 * time.Second),
		Annotations:      AnnotationFilter{OptOut: "resctrl-mon.io/disable", OptOutNamespaces: []string{EveryNamespace}},
		MBMAssignment:    MBMAssignKernel,
		// The prefix of optOut's, so the two read as one family.
		MBMAssignmentAnnotation: "resctrl-mon.io/bandwidth",
		MBMAssignmentNamespaces: []string{EveryNamespace},
		// A rate needs a few scrapes after a counter starts; 5m is Prometheus' usual rate
		// window and the retention default.
		MBMAssignmentHold: Duration(5 * time.Minute),
		Log:               "syslog",
		RuntimeRoots:      []string{"/run/runc", "/run/containerd/runc/*", "/run/crun"},
		Runtime:           "/usr/sbin/runc",
		RuntimeHook:       DefaultHookPath,
		// A node where every pod goes pending at once (RMIDs run out) posts a minute's
		// worth at once, then one a second: the API server's default event rate limit
		// per source (EventRateLimit) is of that order.
		Events: Events{Rate: 60},
	}
}

// Validate checks every field and names the key of the first bad one.
func (c Config) Validate() error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config key %q: %s", key, fmt.Sprintf(format, args...)))
	}
	for key, p := range map[string]string{"resctrlRoot": c.ResctrlRoot, "stateDir": c.StateDir,
		"runtime": c.Runtime, "runtimeHook": c.RuntimeHook} {
		if p == "" || !filepath.IsAbs(p) {
			bad(key, "%q is not an absolute path", p)
		}
	}
	if c.SnapshotDir != "" && !filepath.IsAbs(c.SnapshotDir) {
		bad("snapshotDir", "%q is not an absolute path", c.SnapshotDir)
	}
	if c.SnapshotMaxAge < 0 {
		bad("snapshotMaxAge", "%s is negative", c.SnapshotMaxAge)
	}
	if c.SnapshotMaxCount < 0 {
		bad("snapshotMaxCount", "%d is negative", c.SnapshotMaxCount)
	}
	if c.Granularity != PerPod && c.Granularity != PerContainer {
		bad("granularity", "%q is not one of pod, container", c.Granularity)
	}
	if c.NoPod != NoPodOwnGroup && c.NoPod != NoPodSkip {
		bad("noPod", "%q is not one of container, skip", c.NoPod)
	}
	if c.FailurePolicy != FailOpen && c.FailurePolicy != FailClosed {
		bad("failurePolicy", "%q is not one of open, closed", c.FailurePolicy)
	}
	if c.MBMAssignment != MBMAssignKernel && c.MBMAssignment != MBMAssignPolicy {
		bad("mbmAssignment", "%q is not one of kernel, policy", c.MBMAssignment)
	}
	if c.MBMAssignmentHold < 0 {
		bad("mbmAssignmentHold", "%s is negative", c.MBMAssignmentHold)
	}
	if strings.ContainsAny(c.MBMAssignmentAnnotation, " \n\x00") {
		bad("mbmAssignmentAnnotation", "%q is not an annotation name", c.MBMAssignmentAnnotation)
	}
	if c.Retention < 0 {
		bad("retention", "%s is negative", c.Retention)
	}
	if !validRMIDReclaim(c.RMIDReclaim) {
		bad("rmidReclaim", "%q is not one of idle, none", c.RMIDReclaim)
	}
	if c.HookBudget < Duration(100*time.Millisecond) || c.HookBudget > Duration(time.Hour) {
		bad("hookBudget", "%s is not between 100ms and 1h", c.HookBudget)
	}
	for key, list := range map[string][]string{"namespaces.include": c.Namespaces.Include, "namespaces.exclude": c.Namespaces.Exclude,
		"annotations.optOutNamespaces": c.Annotations.OptOutNamespaces, "mbmAssignmentNamespaces": c.MBMAssignmentNamespaces} {
		for _, n := range list {
			if n == "" || strings.ContainsAny(n, "/\x00\n") {
				bad(key, "%q is not a namespace name", n)
			}
		}
	}
	if c.Events.Rate < 1 || c.Events.Rate > 6000 {
		bad("events.rate", "%d is not between 1 and 6000 a minute", c.Events.Rate)
	}
	if _, err := ParseSelector(c.PodSelector); err != nil {
		bad("podSelector", "%s", err)
	}
	for _, r := range c.RuntimeRoots {
		if !filepath.IsAbs(r) {
			bad("runtimeRoots", "%q is not an absolute path", r)
		}
	}
	if c.Log != "syslog" && c.Log != "stderr" && !strings.HasPrefix(c.Log, "file:/") {
		bad("log", "%q is not one of syslog, stderr, file:/absolute/path", c.Log)
	}
	return errors.Join(errs...)
}

// Duration is a time.Duration written as "5m" in YAML.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalJSON accepts "90s" style strings (YAML is converted to JSON first).
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration like 90s or 5m", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the "5m0s" form.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }
