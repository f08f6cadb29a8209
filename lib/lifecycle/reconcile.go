package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/intel/goresctrl/pkg/monitor"

	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/state"
)

// Action is one thing reconcile did (or, in a dry run, would do).
type Action struct {
	Action string `json:"action"` // created, recreated, completed, adopted, moved, idle, removed, kept, pending, refused
	Group  string `json:"group"`  // path below the resctrl root
	Pod    string `json:"pod,omitempty"`
	Detail string `json:"detail,omitempty"`
}

const (
	// reconcileLockWait is how long reconcile waits for a pod a hook is working on before
	// leaving it to the next run: the hook is doing the job.
	reconcileLockWait = 2 * time.Second
)

func busy(group, pod string) Action {
	return Action{Action: "busy", Group: group, Pod: pod, Detail: "a hook holds the pod's lock; left to the next run"}
}

// wanted is a group that live containers need.
type wanted struct {
	name, path, class string
	idn               identity.Identity
	containers        []container.Container
}

// Reconcile makes resctrl and the registry match the live containers: every live pod has its
// group with all its tasks in it, and no owned group outlives its pod by more than the
// retention window. It repairs what a crashed runtime or hook, a poststop that never ran, a
// re-mount of resctrl, a runtime's RDT setup (which deletes empty groups) or a wiped state
// dir left behind. It takes the same per-pod locks as the hooks, so it is safe to run while
// they run, and it is idempotent: a second run finds nothing to do.
func (m *Manager) Reconcile(live []container.Container, dryRun bool) ([]Action, error) {
	var acts []Action
	var errs []error
	cgroups, err := procfs.ReadCgroups()
	if err != nil {
		return nil, err
	}
	want := map[string]*wanted{}
	for _, c := range live {
		idn, err := identity.FromAnnotations(c.ID, c.Annotations)
		if err != nil {
			acts = append(acts, Action{Action: "refused", Group: c.ID, Detail: err.Error()})
			continue
		}
		name, _ := groupName(m.cfg, c.ID, idn, c.Annotations)
		if name == "" {
			continue
		}
		w := want[name]
		if w == nil {
			w = &wanted{name: name, path: groupPath(c.ClosID, name), class: c.ClosID, idn: idn}
			want[name] = w
		}
		if c.ClosID != w.class {
			acts = append(acts, Action{Action: "refused", Group: w.path, Pod: idn.PodUID,
				Detail: fmt.Sprintf("container %s runs in class %q, the pod's group is under %q", c.ID, classLabel(c.ClosID), classLabel(w.class))})
			continue
		}
		w.containers = append(w.containers, c)
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a, err := m.reconcileLive(want[n], cgroups, dryRun)
		acts = append(acts, a...)
		errs = append(errs, err)
	}
	recs, err := m.store.List()
	errs = append(errs, err)
	for _, r := range recs {
		if want[r.Group] != nil {
			continue
		}
		a, err := m.reconcileGone(r.Group, dryRun)
		acts = append(acts, a...)
		errs = append(errs, err)
	}
	if !dryRun {
		errs = append(errs, m.unbindDead(live))
	}
	return acts, errors.Join(errs...)
}

// reconcileLive gives a live pod its group and puts all its tasks in it.
func (m *Manager) reconcileLive(w *wanted, cgroups procfs.Cgroups, dryRun bool) (acts []Action, err error) {
	lock, err := m.store.Lock(w.name, reconcileLockWait)
	if errors.Is(err, state.ErrLocked) {
		return []Action{busy(w.path, w.idn.PodUID)}, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, lock.Unlock()) }()
	act := func(what, detail string) {
		acts = append(acts, Action{Action: what, Group: w.path, Pod: w.idn.PodUID, Detail: detail})
	}

	rec, owned, err := m.store.Load(w.name)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(m.cfg.ResctrlRoot, w.path)
	// One read of the tasks file says whether the group exists and what it holds: on the
	// timer's common path (everything in place) that is all reconcile touches in resctrl.
	in, exists := readTasks(dir)
	missing := missingTasks(in, w.containers, cgroups)
	if owned && rec.Class != w.class {
		act("refused", fmt.Sprintf("the pod's group is under class %q, its containers run in %q", classLabel(rec.Class), classLabel(w.class)))
		return acts, nil
	}
	before := rec
	switch {
	case !owned && exists:
		// The registry was lost. The group is ours only if it holds the pod's own tasks:
		// nobody else put them there.
		if !holdsAny(in, w.containers) {
			act("refused", "a group of that name exists, holds none of the pod's tasks, and is not ours")
			return acts, nil
		}
		rec = m.newRecord(w)
		act("adopted", "registry entry rebuilt")
	case !owned:
		rec = m.newRecord(w)
		act("created", "")
	case !exists && rec.Pending != "":
		act("completed", "was pending: "+rec.Pending)
	case !exists:
		act("recreated", "the group had disappeared")
	}
	if dryRun {
		if exists && owned && len(missing) > 0 {
			act("moved", fmt.Sprintf("%d tasks", len(missing)))
		}
		return acts, nil
	}
	if exists && owned && len(missing) == 0 {
		// In place: only the record may need the live container list.
		if err := m.syncContainers(&rec, w); err != nil {
			return acts, err
		}
		rec.IdleSince = nil
		if !sameRecord(before, rec) {
			return acts, m.store.Save(rec)
		}
		return acts, nil
	}
	// goresctrl adopts an existing group or makes a missing one; either way it tracks it.
	if _, err := m.mon.EnsureGroup(w.name, w.class); err != nil {
		if !errors.Is(err, monitor.ErrNoRMIDs) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EBUSY) {
			return acts, fmt.Errorf("create %s: %w%s", w.path, err, m.kernelSaysSuffix())
		}
		rec.Pending = fmt.Sprintf("%s for %s: %s", ErrNoRMIDs, w.path, m.kernelSays())
		if len(acts) > 0 {
			acts = acts[:len(acts)-1]
		}
		act("pending", rec.Pending)
		return acts, errors.Join(m.syncContainers(&rec, w), m.store.Save(rec))
	}
	if !exists {
		m.writeSnapshot(rec, snapshot.Begin)
	}
	// No leader here: reconcile does not reclassify, so threads outside the class stay.
	moved, _, err := m.assign(w.name, missing, w.class != "", 0)
	if err != nil {
		return acts, err
	}
	if moved > 0 {
		if exists && owned {
			act("moved", fmt.Sprintf("%d tasks were outside the group", moved))
		}
		// The work these tasks did before now was counted elsewhere.
		rec.LateAssigned = true
	}
	rec.Pending, rec.IdleSince, rec.RemoveFailed = "", nil, ""
	if err := m.syncContainers(&rec, w); err != nil {
		return acts, err
	}
	if !sameRecord(before, rec) || !owned {
		return acts, m.store.Save(rec)
	}
	return acts, nil
}

func (m *Manager) newRecord(w *wanted) state.Record {
	return state.Record{Group: w.name, Path: w.path, Class: w.class, PodUID: w.idn.PodUID, Namespace: w.idn.Namespace,
		PodName: w.idn.PodName, SandboxID: w.idn.SandboxID, Created: m.now().UTC(), Containers: map[string]time.Time{}}
}

// syncContainers makes the record's containers exactly the live ones, and binds them.
func (m *Manager) syncContainers(rec *state.Record, w *wanted) error {
	if rec.Containers == nil {
		rec.Containers = map[string]time.Time{}
	}
	live := map[string]bool{}
	var errs []error
	for _, c := range w.containers {
		live[c.ID] = true
		if _, ok := rec.Containers[c.ID]; !ok {
			rec.Containers[c.ID] = m.now().UTC()
		}
		if g, _ := m.store.ContainerGroup(c.ID); g != w.name {
			errs = append(errs, m.store.BindContainer(c.ID, w.name))
		}
	}
	for id := range rec.Containers {
		if !live[id] && !initAlive(*rec, id) {
			delete(rec.Containers, id)
			delete(rec.Inits, id)
			errs = append(errs, m.store.UnbindContainer(id))
		}
	}
	return errors.Join(errs...)
}

// missingTasks lists the threads of the pod's containers that are not in the group.
func missingTasks(in map[int]bool, cs []container.Container, cgroups procfs.Cgroups) []int {
	var out []int
	for _, c := range cs {
		for _, tid := range containerTasks(c, cgroups) {
			// A zombie is not worth moving (its counts are final); checked only for the
			// threads outside the group, the few on the timer's common path.
			if !in[tid] && !procfs.Finished(tid) {
				out = append(out, tid)
			}
		}
	}
	return out
}

func holdsAny(in map[int]bool, cs []container.Container) bool {
	for _, c := range cs {
		if in[c.Pid] {
			return true
		}
	}
	return false
}

// containerTasks lists every thread of every process in the container's cgroups.
func containerTasks(c container.Container, cgroups procfs.Cgroups) []int {
	var out []int
	for _, p := range cgroups.Peers(c.Pid) {
		tids, _ := procfs.Threads(p)
		out = append(out, tids...)
	}
	return out
}

// readTasks reads a group's tasks; ok is false when the group does not exist.
func readTasks(dir string) (in map[int]bool, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, "tasks"))
	if err != nil {
		return map[int]bool{}, false
	}
	return parseTasks(b), true
}

// parseTasks parses a tasks file: one thread id a line. Anything else is not a task.
func parseTasks(b []byte) map[int]bool {
	in := map[int]bool{}
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			in[n] = true
		}
	}
	return in
}

// reconcileGone handles an owned group none of whose containers is alive: its containers'
// poststop never ran, or it is idle. It goes once the retention window has passed.
func (m *Manager) reconcileGone(name string, dryRun bool) (acts []Action, err error) {
	lock, err := m.store.Lock(name, reconcileLockWait)
	if errors.Is(err, state.ErrLocked) {
		return []Action{busy(name, "")}, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, lock.Unlock()) }()
	rec, owned, err := m.store.Load(name)
	if err != nil || !owned {
		return nil, err
	}
	act := func(what, detail string) {
		acts = append(acts, Action{Action: what, Group: rec.Path, Pod: rec.PodUID, Detail: detail})
	}
	for id := range rec.Containers {
		if initAlive(rec, id) {
			// Placed by its createRuntime hook and running, but not in its runtime's state
			// yet (runtimes write it after their hooks ran): not gone.
			return nil, nil
		}
	}
	if len(rec.Containers) > 0 || rec.IdleSince == nil {
		ids := make([]string, 0, len(rec.Containers))
		for id := range rec.Containers {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		act("idle", "no live container (gone without poststop: "+strings.Join(ids, ", ")+")")
		if dryRun {
			return acts, nil
		}
		for _, id := range ids {
			if err := m.store.UnbindContainer(id); err != nil {
				return acts, err
			}
		}
		now := m.now().UTC()
		rec.Containers, rec.Inits, rec.IdleSince = map[string]time.Time{}, nil, &now
		if err := m.store.Save(rec); err != nil {
			return acts, err
		}
	}
	if !m.expired(rec) {
		return acts, nil
	}
	if dryRun {
		act("removed", "idle past the retention window")
		return acts, nil
	}
	action, detail := m.remove(rec)
	act(action, detail)
	return acts, nil
}

// unbindDead forgets container bindings of containers that are not alive and in no record.
func (m *Manager) unbindDead(live []container.Container) error {
	alive := map[string]bool{}
	for _, c := range live {
		alive[c.ID] = true
	}
	ids, err := m.store.Containers()
	var errs []error
	for _, id := range ids {
		if alive[id] {
			continue
		}
		g, _ := m.store.ContainerGroup(id)
		if rec, ok, _ := m.store.Load(g); ok {
			if _, in := rec.Containers[id]; in {
				continue
			}
		}
		errs = append(errs, m.store.UnbindContainer(id))
	}
	return errors.Join(append(errs, err)...)
}

// sameRecord reports whether a save would change nothing that matters.
func sameRecord(a, b state.Record) bool {
	if a.Pending != b.Pending || a.LateAssigned != b.LateAssigned || (a.IdleSince == nil) != (b.IdleSince == nil) ||
		a.RemoveFailed != b.RemoveFailed || len(a.Containers) != len(b.Containers) {
		return false
	}
	for id := range a.Containers {
		if _, ok := b.Containers[id]; !ok {
			return false
		}
	}
	return true
}

// initAlive reports whether the init process recorded for a container still runs.
func initAlive(rec state.Record, id string) bool {
	in, ok := rec.Inits[id]
	return ok && procfs.SameProcess(in.Pid, in.Start)
}
