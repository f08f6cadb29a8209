package resctrlsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Assignable bandwidth counters: the "mbm_event" counter assignment mode of Linux ≥ 6.18, the
// default on AMD processors with ABMC. What this file does, and the kernel text each rule
// comes from (Documentation/filesystems/resctrl.rst and fs/resctrl/monitor.c, rdtgroup.c and
// ctrlmondata.c of Linux 6.18):
//
//   - "mbm_event mode allows users to assign a hardware counter to an RMID, event pair and
//     monitor the bandwidth usage as long as it is assigned ... a monitoring event can only
//     accumulate data while it is backed by a hardware counter." (resctrl.rst, mbm_assign_mode)
//   - num_mbm_cntrs is "the maximum number of counters (total of available and assigned
//     counters) in each domain" ("0=32;1=32"), available_mbm_cntrs those still free
//     ("0=30;1=30"). Both events of every group draw on the one pool of their domain:
//     mbm_cntr_alloc() takes the lowest free counter id of the domain.
//   - An assignment starts the count from zero: rdtgroup_assign_cntr() resets the
//     "non-architectural state", and the x86 resctrl_arch_config_cntr() says "The hardware
//     counter is reset (because cfg_en == 1) so there is no need to record initial non-zero
//     counts." So a counter unassigned and assigned again starts over too.
//   - mkdir (of a CTRL_MON or MON group) and the mount (for the default group) call
//     rdtgroup_assign_cntrs(): when mbm_assign_on_mkdir is set, mbm_total_bytes then
//     mbm_local_bytes get a counter in every domain in turn, each event stopping at its first
//     domain without a free one. "It is not necessary to fail the group creation": mkdir
//     succeeds and last_cmd_status keeps "Failed to allocate counter for <event> in domain <id>".
//   - rmdir, and the removal of a CTRL_MON group's MON groups with it, frees the group's
//     counters (rdtgroup_unassign_cntrs()).
//   - mbm_assign_on_mkdir is "Enabled by default on boot, also when switched from "default"
//     mode to "mbm_event" counter assignment mode".
//   - Switching the mode frees every counter and resets every MBM count
//     (resctrl_mbm_assign_mode_write(): mbm_cntr_free_all(), resctrl_reset_rmid_all()).
//     "Moving to mbm_event counter assignment mode requires users to assign the counters to
//     the events. Otherwise, the MBM event counters will return 'Unassigned' when read."
//   - Reading an MBM event of a MON group without a counter gives "Unassigned"; "For CTRL_MON
//     groups, 'Unassigned' is returned if the MBM event does not have an assigned counter in
//     the CTRL_MON group nor in any of its associated MON groups" (resctrl.rst, mon_data);
//     otherwise mon_event_count() sums those that have one.
//
// Not modelled: writes to info/L3_MON/event_configs/*/event_filter (the files read the
// kernel's defaults), and the "Unavailable" a first read gives after an event_filter change.

// MBMAssign is the counter assignment interface a simulated kernel offers; see
// Options.MBMAssign.
type MBMAssign string

const (
	// MBMAssignAbsent is a kernel before 6.18: no mbm_assign_mode file.
	MBMAssignAbsent MBMAssign = ""
	// MBMAssignDefaultOnly is Linux ≥ 6.18 on hardware without assignable counters (Intel):
	// mbm_assign_mode reads "[default]" and refuses "mbm_event".
	MBMAssignDefaultOnly MBMAssign = "default-only"
	// MBMAssignEvent is ABMC hardware in "mbm_event" mode, as the kernel mounts it.
	MBMAssignEvent MBMAssign = "mbm_event"
	// MBMAssignDefault is ABMC hardware switched to "default" mode (echo default >
	// mbm_assign_mode): every group counts, as before 6.18, until switched back.
	MBMAssignDefault MBMAssign = "default"
)

var mbmAssignChoices = []MBMAssign{MBMAssignAbsent, MBMAssignDefaultOnly, MBMAssignEvent, MBMAssignDefault}

func (a MBMAssign) valid() bool      { return slices.Contains(mbmAssignChoices, a) }
func (a MBMAssign) assignable() bool { return a == MBMAssignEvent || a == MBMAssignDefault }

// mbmEvent is an assignable event, in the kernel's order (QOS_L3_MBM_TOTAL_EVENT_ID before
// QOS_L3_MBM_LOCAL_EVENT_ID), which is the order of mbm_L3_assignments and of mkdir's
// assignments.
type mbmEvent int

const (
	evTotal mbmEvent = iota
	evLocal
	numMBMEvents
)

var mbmEventNames = [numMBMEvents]string{"mbm_total_bytes", "mbm_local_bytes"}

func mbmEventByName(name string) (mbmEvent, bool) {
	for ev, n := range mbmEventNames {
		if n == name {
			return mbmEvent(ev), true
		}
	}
	return 0, false
}

// eventFilters are what info/L3_MON/event_configs/<event>/event_filter show by default.
var eventFilters = [numMBMEvents]string{
	"local_reads,remote_reads,local_non_temporal_writes,remote_non_temporal_writes," +
		"local_reads_slow_memory,remote_reads_slow_memory,dirty_victim_writes_all",
	"local_reads,local_non_temporal_writes,local_reads_slow_memory",
}

// assigner is the L3 monitor's counter state. It lives in the model, under its mutex.
type assigner struct {
	enabled bool         // mbm_event mode is on
	onMkdir bool         // info/L3_MON/mbm_assign_on_mkdir
	slots   [][]cntrSlot // [domain][counter id]: who holds the counter; a nil group is free
}

type cntrSlot struct {
	g  *group
	ev mbmEvent
}

func newAssigner(o Options) assigner {
	a := assigner{enabled: o.MBMAssign == MBMAssignEvent, onMkdir: true}
	a.freeAll(o)
	return a
}

func (a *assigner) freeAll(o Options) {
	a.slots = make([][]cntrSlot, o.L3Domains)
	for d := range a.slots {
		a.slots[d] = make([]cntrSlot, o.MBMCounters)
	}
}

func (a *assigner) available(d int) int {
	n := 0
	for _, s := range a.slots[d] {
		if s.g == nil {
			n++
		}
	}
	return n
}

// lastCmdf adds a line to last_cmd_status, which the kernel accumulates until the next
// command clears it.
func (m *model) lastCmdf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if m.lastCmd == "ok" {
		m.lastCmd = line
		return
	}
	m.lastCmd += "\n" + line
}

// mbmRaw is what g has counted of ev in domain d since its RMID was allocated or the mode
// last changed; the caller has settled g.
func mbmRaw(g *group, d int, ev mbmEvent) float64 {
	l := &g.counters.l3[d]
	if ev == evLocal {
		return l.local - l.base[ev]
	}
	return l.total - l.base[ev]
}

// resetMBM makes g's count of ev in domain d start again from zero.
func resetMBM(g *group, d int, ev mbmEvent) {
	l := &g.counters.l3[d]
	l.base[ev] = l.total
	if ev == evLocal {
		l.base[ev] = l.local
	}
}

// assignCntr gives g a counter for ev in domain d, as rdtgroup_alloc_assign_cntr() does:
// nothing if it has one, the lowest free one otherwise, and a count that starts at zero.
func (m *model) assignCntr(g *group, d int, ev mbmEvent) syscall.Errno {
	l := &g.counters.l3[d]
	if l.cntr[ev] >= 0 {
		return 0
	}
	slots := m.assign.slots[d]
	id := slices.IndexFunc(slots, func(s cntrSlot) bool { return s.g == nil })
	if id < 0 {
		m.lastCmdf("Failed to allocate counter for %s in domain %d", mbmEventNames[ev], d)
		return syscall.ENOSPC
	}
	slots[id] = cntrSlot{g: g, ev: ev}
	m.settleGroup(g) // what ran before the assignment is not counted
	l.cntr[ev] = id
	resetMBM(g, d, ev)
	return 0
}

func (m *model) unassignCntr(g *group, d int, ev mbmEvent) {
	l := &g.counters.l3[d]
	if l.cntr[ev] < 0 {
		return
	}
	m.assign.slots[d][l.cntr[ev]] = cntrSlot{}
	l.cntr[ev] = -1
}

// assignEvent assigns ev in domain d, or in every domain when d is negative: then, like
// rdtgroup_assign_cntr_event(), it stops at the first domain without a free counter and
// keeps the assignments made before it.
func (m *model) assignEvent(g *group, d int, ev mbmEvent) syscall.Errno {
	if d >= 0 {
		return m.assignCntr(g, d, ev)
	}
	for d := range m.opts.L3Domains {
		if errno := m.assignCntr(g, d, ev); errno != 0 {
			return errno
		}
	}
	return 0
}

func (m *model) unassignEvent(g *group, d int, ev mbmEvent) {
	if d >= 0 {
		m.unassignCntr(g, d, ev)
		return
	}
	for d := range m.opts.L3Domains {
		m.unassignCntr(g, d, ev)
	}
}

// assignOnCreate is rdtgroup_assign_cntrs(), run for a new group and for the root at mount.
// Failures leave last_cmd_status saying so but never fail the mkdir.
func (m *model) assignOnCreate(g *group) {
	if !m.assign.enabled || !m.assign.onMkdir {
		return
	}
	for ev := range numMBMEvents {
		_ = m.assignEvent(g, -1, ev)
	}
}

// releaseCntrs frees the counters of g and of its MON groups, as their rmdir does.
func (m *model) releaseCntrs(g *group) {
	if !m.opts.MBMAssign.assignable() {
		return
	}
	for _, c := range g.mons {
		m.releaseCntrs(c)
	}
	for ev := range numMBMEvents {
		m.unassignEvent(g, -1, ev)
	}
}

// setAssignMode switches between "mbm_event" and "default": every counter is freed and every
// MBM count starts again from zero.
func (m *model) setAssignMode(enable bool) {
	if enable == m.assign.enabled {
		return
	}
	m.assign.enabled = enable
	if enable {
		m.assign.onMkdir = true
	}
	m.assign.freeAll(m.opts)
	var walk func(g *group)
	walk = func(g *group) {
		m.settleGroup(g)
		for d := range m.opts.L3Domains {
			for ev := range numMBMEvents {
				g.counters.l3[d].cntr[ev] = -1
				resetMBM(g, d, ev)
			}
		}
		for _, c := range g.mons {
			walk(c)
		}
		for _, c := range g.ctrls {
			walk(c)
		}
	}
	walk(m.root)
}

// readMBM renders mbm_total_bytes or mbm_local_bytes of g in domain d. In mbm_event mode
// only counted events have a value: a MON group's own counter, or for a CTRL_MON group (and
// the root) the sum over itself and its MON groups of those that have one.
func (m *model) readMBM(g *group, d int, ev mbmEvent) string {
	if !m.assign.enabled {
		return strconv.FormatUint(uint64(mbmRaw(g, d, ev)), 10) + "\n"
	}
	members := []*group{g}
	if g.kind != kindMon {
		members = append(members, sortedGroups(g.mons)...)
	}
	var sum float64
	counted := false
	for _, x := range members {
		if x.counters.l3[d].cntr[ev] < 0 {
			continue
		}
		if x != g {
			m.settleGroup(x)
		}
		sum += mbmRaw(x, d, ev)
		counted = true
	}
	if !counted {
		return "Unassigned\n"
	}
	return strconv.FormatUint(uint64(sum), 10) + "\n"
}

// perDomain renders "0=v0;1=v1", the format of num_mbm_cntrs and available_mbm_cntrs.
func perDomain(n int, v func(d int) int) string {
	parts := make([]string, n)
	for d := range n {
		parts[d] = strconv.Itoa(d) + "=" + strconv.Itoa(v(d))
	}
	return strings.Join(parts, ";") + "\n"
}

func (m *model) renderAssignMode() string {
	switch {
	case !m.opts.MBMAssign.assignable():
		return "[default]\n"
	case m.assignModeFixed(): // the other mode is not listed (mpam.go)
		return "[mbm_event]\n"
	case m.assign.enabled:
		return "[mbm_event]\ndefault\n"
	}
	return "mbm_event\n[default]\n"
}

// errNotEnabled is how the files that work only in mbm_event mode refuse otherwise.
func (m *model) errNotEnabled(msg string) syscall.Errno {
	m.lastCmd = msg
	return syscall.EINVAL
}

func (m *model) renderAvailable() (string, syscall.Errno) {
	m.lastCmd = "ok"
	if !m.assign.enabled {
		return "", m.errNotEnabled("mbm_event mode is not enabled")
	}
	return perDomain(m.opts.L3Domains, m.assign.available), 0
}

func (m *model) renderOnMkdir() (string, syscall.Errno) {
	m.lastCmd = "ok"
	if !m.assign.enabled {
		return "", m.errNotEnabled("mbm_event mode is not enabled")
	}
	if m.assign.onMkdir {
		return "1\n", 0
	}
	return "0\n", 0
}

func (m *model) renderEventFilter(event string) (string, syscall.Errno) {
	ev, ok := mbmEventByName(event)
	if !ok {
		return "", syscall.ENOENT
	}
	if !m.assign.enabled {
		return "", m.errNotEnabled("mbm_event counter assignment mode is not enabled")
	}
	return eventFilters[ev] + "\n", 0
}

// renderAssignments is mbm_L3_assignments_show().
func (m *model) renderAssignments(g *group) (string, syscall.Errno) {
	m.lastCmd = "ok"
	if !m.assign.enabled {
		return "", m.errNotEnabled("mbm_event counter assignment mode is not enabled")
	}
	var b strings.Builder
	for ev := range numMBMEvents {
		b.WriteString(mbmEventNames[ev] + ":")
		for d := range m.opts.L3Domains {
			if d > 0 {
				b.WriteByte(';')
			}
			state := "_"
			if g.counters.l3[d].cntr[ev] >= 0 {
				state = "e"
			}
			b.WriteString(strconv.Itoa(d) + "=" + state)
		}
		b.WriteByte('\n')
	}
	return b.String(), 0
}

// writeAssignMode is resctrl_mbm_assign_mode_write().
func (m *model) writeAssignMode(data []byte) syscall.Errno {
	s, ok := strings.CutSuffix(string(data), "\n")
	if !ok { // "Valid input requires a trailing newline"
		return syscall.EINVAL
	}
	m.lastCmd = "ok"
	switch s {
	case "default":
		if errno, refused := m.refuseFixedSwitch(false); refused {
			return errno
		}
		if m.opts.MBMAssign.assignable() {
			m.setAssignMode(false)
		}
		return 0
	case "mbm_event":
		if !m.opts.MBMAssign.assignable() {
			m.lastCmd = "mbm_event mode is not supported"
			return syscall.EINVAL
		}
		if errno, refused := m.refuseFixedSwitch(true); refused {
			return errno
		}
		m.setAssignMode(true)
		return 0
	}
	m.lastCmd = "Unsupported assign mode"
	return syscall.EINVAL
}

// writeOnMkdir is resctrl_mbm_assign_on_mkdir_write(): kstrtobool first, then the mode.
func (m *model) writeOnMkdir(data []byte) syscall.Errno {
	v, ok := kstrtobool(data)
	if !ok {
		return syscall.EINVAL
	}
	m.lastCmd = "ok"
	if !m.assign.enabled {
		return m.errNotEnabled("mbm_event mode is not enabled")
	}
	m.assign.onMkdir = v
	return 0
}

// kstrtobool is the kernel's: only the first one or two characters count.
func kstrtobool(b []byte) (value, ok bool) {
	if len(b) == 0 {
		return false, false
	}
	switch b[0] {
	case 'y', 'Y', 't', 'T', '1':
		return true, true
	case 'n', 'N', 'f', 'F', '0':
		return false, true
	case 'o', 'O':
		if len(b) > 1 {
			switch b[1] {
			case 'n', 'N':
				return true, true
			case 'f', 'F':
				return false, true
			}
		}
	}
	return false, false
}

// writeAssignments is mbm_L3_assignments_write(): the lines are applied in order and the
// first failure stops the write, keeping what was done before it.
func (m *model) writeAssignments(g *group, data []byte) syscall.Errno {
	text, ok := strings.CutSuffix(string(data), "\n")
	if !ok { // "Valid input requires a trailing newline", checked before anything else
		return syscall.EINVAL
	}
	if g.dead {
		return syscall.ENOENT
	}
	if errno := m.faults.take(OpAssignWrite); errno != 0 {
		return m.injected(OpAssignWrite, errno)
	}
	m.lastCmd = "ok"
	if !m.assign.enabled {
		return m.errNotEnabled("mbm_event mode is not enabled")
	}
	ops, perr := parseAssignments(text, m.opts.L3Domains)
	for _, op := range ops {
		if errno := m.applyAssignOp(g, op); errno != 0 {
			return errno
		}
	}
	if perr != nil {
		m.lastCmdf("%s", perr.msg)
		return perr.errno
	}
	return 0
}

// applyAssignOp is rdtgroup_modify_assign_state(): the state is checked only now, after the
// domain, as the kernel does.
func (m *model) applyAssignOp(g *group, op assignOp) syscall.Errno {
	errno := syscall.Errno(syscall.EINVAL)
	switch {
	case !op.hasState || len(op.state) != 1:
	case op.state == "e":
		errno = m.assignEvent(g, op.domain, op.ev)
	case op.state == "_":
		m.unassignEvent(g, op.domain, op.ev)
		errno = 0
	}
	if errno != 0 {
		m.lastCmdf("Assign operation '%s' failed", op)
	}
	return errno
}
