// Package inventory is the read side of resctrl-mon: what groups it owns, for which pods,
// in what state, with which containers, cgroups, tasks and counters. status, the exporter
// and the NRI adapter read through it. It opens the state directory read-only, takes no
// lock (records are replaced by rename, so a reader sees a whole one), writes nothing and
// never creates a group, so it is safe beside running hooks and reconcile. It reads resctrl
// only through resctrlfs.View, opened with the mount check its front end chose, so its tests
// read fixture trees (test/resctrltree) without root.
package inventory

import (
	"errors"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// State is where a pod's group stands. One list, in States.
type State string

const (
	// Active: containers run in the group, placed from their first instruction.
	Active State = "active"
	// LateAssigned: containers run in the group, but some of their tasks were placed after
	// they had started (reconcile, a pending pod completed): the counters are a lower bound.
	LateAssigned State = "late-assigned"
	// Idle: no container; the group is kept for the retention window.
	Idle State = "idle"
	// Pending: no group yet (no free RMID); a later placement or reconcile completes it.
	Pending State = "pending"
	// Missing: the group disappeared (a re-mount, a runtime's RDT setup); reconcile
	// re-creates it.
	Missing State = "missing"
	// Stopped: containers are recorded but none of their inits runs: they stopped and their
	// departure has not come (CRI-O runs poststop only when a container is removed, never at
	// stop; a container whose start failed after createRuntime gets none). Nothing counts in
	// the group; its departure, or reconcile, makes it idle.
	Stopped State = "stopped"
)

// States lists every State.
var States = []State{Active, LateAssigned, Stopped, Idle, Pending, Missing}

// Inventory reads the state directory and resctrl.
type Inventory struct {
	view  *resctrlfs.View
	store *registry.Store
	now   func() time.Time
}

// Open opens the inventory on the configuration's resctrl root, checked with mount, and its
// state directory. The mount check is the front end's choice (resctrlfs.MountFor of the
// configuration's resctrlSimulator; nil is resctrlfs.Check), as every opener of resctrl has
// it injected.
func Open(cfg config.Config, mount resctrlfs.Mount) (*Inventory, error) {
	view, err := resctrlfs.OpenView(cfg.ResctrlRoot, mount)
	if err != nil {
		return nil, err
	}
	store, err := registry.OpenReadOnly(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	return &Inventory{view: view, store: store, now: time.Now}, nil
}

// Container is one container of a pod's group.
type Container struct {
	ID string `json:"id"`
	// Name is its Kubernetes container name, or a runtime's name for it, as its front end
	// recorded it (registry.Record.Names); "" when none was (a plain OCI container, a record of
	// an older version).
	Name   string    `json:"name,omitempty"`
	Placed time.Time `json:"placed"`
	// Cgroup is its cgroup v2 path, relative to the cgroup2 mount ("" if unknown).
	Cgroup string `json:"cgroup,omitempty"`
}

// Pod is one owned group and its pod.
type Pod struct {
	Group     string `json:"group"`
	Path      string `json:"path"` // below the resctrl root
	Class     string `json:"class,omitempty"`
	PodUID    string `json:"podUID,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	PodName   string `json:"podName,omitempty"`
	State     State  `json:"state"`
	Detail    string `json:"detail,omitempty"`
	// Created is when this life of the group began (its .begin snapshot's life).
	Created    time.Time     `json:"created"`
	Age        time.Duration `json:"age"`
	Containers []Container   `json:"containers"`
	// Cgroup is the pod's cgroup v2 path, the one its runtime named as the pod's (the
	// sandbox's cgroup parent, podman's pod cgroup; see registry.Record.PodCgroup); "" when
	// it named none, as for a container with no pod.
	Cgroup string `json:"cgroup,omitempty"`
	Tasks  int    `json:"tasks"` // tasks in the group that can still run
	// Readings and Missing are the group's counters (Pods with counters only).
	Readings []resctrlfs.Reading `json:"readings,omitempty"`
	Missing  []resctrlfs.Missing `json:"missing,omitempty"`
}

// Options says what Pods reads beside the registry.
type Options struct {
	Tasks    bool // count each group's live tasks (reads its tasks file and /proc)
	Counters bool // read each group's mon_data
	// Subdomains reads, with Counters, the per-node files of a Sub-NUMA Cluster node too
	// (resctrlfs.MonReader.Subdomains): Readings with Sub set beside each cache's sum.
	Subdomains bool
}

// Pods lists every owned group. Unreadable records and groups are reported in the error,
// and the rest is still returned.
func (inv *Inventory) Pods(o Options) ([]Pod, error) {
	recs, err := inv.store.List()
	errs := []error{err}
	now := inv.now()
	out := make([]Pod, 0, len(recs))
	for _, r := range recs {
		p := Pod{Group: r.Group, Path: r.Path, Class: r.Class, PodUID: r.PodUID, Namespace: r.Namespace, PodName: r.PodName,
			Created: r.Created, Age: now.Sub(r.Created).Round(time.Second), Containers: containers(r)}
		p.Cgroup = r.PodCgroup
		a := addrOf(p)
		exists := inv.view.Exists(a)
		p.State, p.Detail = stateOf(r, exists, now)
		if exists {
			errs = append(errs, inv.read(&p, a, o))
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// addrOf is where a pod's group is: its record's class and group, as lifecycle made it.
func addrOf(p Pod) resctrlfs.Addr { return resctrlfs.Addr{Class: p.Class, Name: p.Group} }

// read fills in what o asks of the group at a beside its record: its live tasks, its
// counters.
func (inv *Inventory) read(p *Pod, a resctrlfs.Addr, o Options) error {
	var errs []error
	if o.Tasks {
		n, err := inv.liveTasks(a)
		errs = append(errs, err)
		p.Tasks = n
	}
	if o.Counters {
		var err error
		p.Readings, p.Missing, err = inv.view.Counters(a, o.Subdomains)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func stateOf(r registry.Record, exists bool, now time.Time) (State, string) {
	var s State
	detail := ""
	switch {
	case r.Pending != "":
		s, detail = Pending, r.Pending
	case !exists:
		s = Missing
	case len(r.Containers) == 0:
		s = Idle
		if r.IdleSince != nil {
			detail = "idle for " + now.Sub(*r.IdleSince).Round(time.Second).String()
		}
	case !anyRunning(r):
		s, detail = Stopped, "no container's init runs; waiting for their departure (or reconcile)"
	case r.LateAssigned:
		s = LateAssigned
	default:
		s = Active
	}
	if r.RemoveFailed != "" {
		detail = strings.TrimSpace(detail + "; removal failed: " + r.RemoveFailed)
	}
	return s, detail
}

// anyRunning reports whether some recorded container may still run: its init (by pid and
// start time) is alive, or it was recorded without one (nothing says it stopped).
func anyRunning(r registry.Record) bool {
	for id := range r.Containers {
		in, ok := r.Inits[id]
		if !ok || procfs.SameProcess(in.Pid, in.Start) {
			return true
		}
	}
	return false
}

func containers(r registry.Record) []Container {
	out := make([]Container, 0, len(r.Containers))
	for id, t := range r.Containers {
		out = append(out, Container{ID: id, Name: r.Name(id), Placed: t, Cgroup: r.Cgroups[id]})
	}
	slices.SortFunc(out, func(a, b Container) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// liveTasks counts a group's tasks that can still run (zombies' counts are final).
func (inv *Inventory) liveTasks(a resctrlfs.Addr) (int, error) {
	tids, err := inv.view.Tasks(a)
	if err != nil {
		return 0, err
	}
	return procfs.Running(tids), nil
}

// RMIDs is the use of the monitoring ids.
type RMIDs struct {
	Used  int `json:"used"`  // every group holds one: the root, control groups, monitoring groups
	Total int `json:"total"` // num_rmids (the smaller one when PERF_PKG has its own)
}

// Assignment is resctrl's counter assignment state (Linux ≥ 6.18; Mode "" before).
func (inv *Inventory) Assignment() (resctrlfs.Assignment, error) {
	return inv.view.Assignment()
}

// RMIDs counts the groups in resctrl (each holds an RMID, ours or not) against num_rmids.
// The kernel does not show RMIDs in limbo.
func (inv *Inventory) RMIDs() (RMIDs, error) {
	var r RMIDs
	total, err := inv.view.NumRMIDs()
	if err != nil {
		return r, err
	}
	r.Total, r.Used = total, 1 // the root group
	p, err := inv.view.Groups()
	if err != nil {
		return r, err
	}
	r.Used += len(p.Classes) + len(p.Groups)
	return r, nil
}
