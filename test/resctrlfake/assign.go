package resctrlfake

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// events are the assignable events in the kernel's order (mbm_total_bytes before
// mbm_local_bytes), the order of mbm_L3_assignments and of mkdir's assignments.
var events = []string{resctrlfs.MBMTotal, resctrlfs.MBMLocal}

// assigner is counter assignment (Linux ≥ 6.18), as resctrl.rst describes mbm_assign_mode:
// num_mbm_cntrs counters in each L3 domain, each held by one group's event there.
type assigner struct {
	mode     string                         // "" (no interface), "default" or "mbm_event"
	domains  []string                       // L3 domain ids, "0", "1", ...
	counters int                            // num_mbm_cntrs of each domain
	onMkdir  bool                           // mbm_assign_on_mkdir
	held     map[string]map[string][]string // group path ("" the root) → domain → events
}

// SetAssignMode makes the kernel one with counter assignment: domains L3 domains of counters
// counters each, in mode ("mbm_event" or "default"). In mbm_event mode the root group takes
// its counters first, as at mount, and every new group takes what is free at its mkdir
// (mbm_assign_on_mkdir, on by default), event by event, stopping at the first domain
// without a free counter.
func (f *Resctrl) SetAssignMode(mode string, domains, counters int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.assign = assigner{mode: mode, counters: counters, onMkdir: true, held: map[string]map[string][]string{}}
	for d := range domains {
		f.assign.domains = append(f.assign.domains, strconv.Itoa(d))
	}
	f.assign.onCreate("")
}

// SwitchMode is a write to mbm_assign_mode: to "default" every counter is freed; back to
// "mbm_event" none is assigned ("Moving to mbm_event counter assignment mode requires users
// to assign the counters to the events").
// Writing the mode the kernel is already in changes nothing, as the kernel's
// resctrl_mbm_assign_mode_write() does (no counter is freed).
func (f *Resctrl) SwitchMode(mode string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = "ok"
	if mode == f.assign.mode {
		return
	}
	f.assign.mode = mode
	f.assign.held = map[string]map[string][]string{}
}

func (a *assigner) free(domain string) int {
	n := a.counters
	for _, byDomain := range a.held {
		n -= len(byDomain[domain])
	}
	return n
}

func (a *assigner) holds(path, domain, event string) bool {
	return slices.Contains(a.held[path][domain], event)
}

func (a *assigner) take(path, domain, event string) {
	if a.held[path] == nil {
		a.held[path] = map[string][]string{}
	}
	a.held[path][domain] = append(a.held[path][domain], event)
}

func (a *assigner) give(path, domain, event string) {
	a.held[path][domain] = slices.DeleteFunc(a.held[path][domain], func(e string) bool { return e == event })
	if len(a.held[path][domain]) == 0 {
		delete(a.held[path], domain)
	}
}

// onCreate is rdtgroup_assign_cntrs() for a new group (or the root at mount).
func (a *assigner) onCreate(path string) {
	if a.mode != resctrlfs.AssignModeEvent || !a.onMkdir {
		return
	}
	for _, ev := range events {
		for _, d := range a.domains {
			if a.free(d) == 0 {
				break
			}
			a.take(path, d, ev)
		}
	}
}

func (a *assigner) release(path string) { delete(a.held, path) }

// Assignment is info/L3_MON: the mode, and in mbm_event mode the counters and those free.
func (f *Resctrl) Assignment() (resctrlfs.Assignment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := resctrlfs.Assignment{Mode: f.assign.mode}
	if !out.Counting() {
		return out, nil
	}
	f.last = "ok" // a read of available_mbm_cntrs clears last_cmd_status
	out.Counters, out.Available = map[string]int{}, map[string]int{}
	for _, d := range f.assign.domains {
		out.Counters[d], out.Available[d] = f.assign.counters, f.assign.free(d)
	}
	return out, nil
}

// GroupAssignment is the group's mbm_L3_assignments, readable in mbm_event mode only.
func (f *Resctrl) GroupAssignment(g resctrlfs.Addr) (resctrlfs.GroupAssignment, error) {
	path := g.Path()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.groups[path]; !ok {
		return resctrlfs.GroupAssignment{}, fmt.Errorf("read %s/mbm_L3_assignments: %w", path, syscall.ENOENT)
	}
	if f.assign.mode != resctrlfs.AssignModeEvent {
		f.last = "mbm_event counter assignment mode is not enabled"
		return resctrlfs.GroupAssignment{}, fmt.Errorf("read %s/mbm_L3_assignments: %w", path, syscall.EINVAL)
	}
	f.last = "ok"
	out := resctrlfs.GroupAssignment{Events: slices.Clone(events), Assigned: map[string][]string{}}
	for d, evs := range f.assign.held[path] {
		for _, ev := range events { // the kernel's order
			if slices.Contains(evs, ev) {
				out.Assigned[d] = append(out.Assigned[d], ev)
			}
		}
	}
	return out, nil
}

// WriteAssignment is a write of "<event>:<domain>=<e|_>[;<domain>=<e|_>...]" to the group's
// mbm_L3_assignments (domain "*": every domain): each domain's counter taken or given back,
// in order; the first that cannot be taken fails the write with the kernel's words in
// LastCmdStatus, keeping what was done before it. One line: the fake takes no "\n" between
// events.
func (f *Resctrl) WriteAssignment(g resctrlfs.Addr, line string) error {
	path := g.Path()
	f.mu.Lock()
	defer f.mu.Unlock()
	fail := func(errno syscall.Errno, status string) error {
		f.last = status
		return fmt.Errorf("assign %q to %s: %w (resctrl: %s)", line, path, errno, status)
	}
	if _, ok := f.groups[path]; !ok {
		return fmt.Errorf("assign %q to %s: %w", line, path, syscall.ENOENT)
	}
	f.last = "ok"
	if err := f.fault(OpAssignWrite, path); err != nil {
		return fmt.Errorf("assign %q to %s: %w (resctrl: %s)", line, path, err, f.last)
	}
	if f.assign.mode != resctrlfs.AssignModeEvent {
		// The write's words; a read of the file says "mbm_event counter assignment mode
		// is not enabled" (GroupAssignment), as the kernel's two functions do.
		return fail(syscall.EINVAL, "mbm_event mode is not enabled")
	}
	event, rest, ok := strings.Cut(line, ":")
	if !ok || !slices.Contains(events, event) {
		return fail(syscall.ENOENT, "Invalid event "+event) // the kernel's errno for an unknown event
	}
	for item := range strings.SplitSeq(rest, ";") {
		id, state, _ := strings.Cut(strings.TrimSpace(item), "=")
		// "*" is every domain, in order, and ends the line; any other id a domain's number.
		doms, label := f.assign.domains, "*"
		if !strings.HasPrefix(id, "*") {
			n, err := strconv.ParseUint(strings.TrimPrefix(id, "+"), 10, 64)
			if err != nil {
				return fail(syscall.EINVAL, "Missing domain id")
			}
			label = strconv.FormatUint(n, 10)
			if !slices.Contains(f.assign.domains, label) {
				return fail(syscall.EINVAL, "Invalid domain id "+label)
			}
			doms = []string{label}
		}
		// A refused operation adds the kernel's "Assign operation ... failed" line.
		failed := fmt.Sprintf("Assign operation '%s:%s=%s' failed", event, label, state)
		if state != "e" && state != "_" {
			return fail(syscall.EINVAL, failed)
		}
		for _, d := range doms {
			switch {
			case state == "_" && f.assign.holds(path, d, event):
				f.assign.give(path, d, event)
			case state == "e" && !f.assign.holds(path, d, event):
				if f.assign.free(d) == 0 {
					// What was taken in the domains before stays, as in the kernel.
					return fail(syscall.ENOSPC, fmt.Sprintf("Failed to allocate counter for %s in domain %s\n%s", event, d, failed))
				}
				f.assign.take(path, d, event)
			}
		}
		if label == "*" {
			break
		}
	}
	f.last = "ok"
	return nil
}
