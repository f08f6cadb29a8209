package resctrlsim

import (
	"slices"
	"syscall"
)

// io_alloc (AMD's L3 Smart Data Cache Injection Allocation Enforcement, Linux ≥ 6.19),
// with Options.IOAlloc, as fs/resctrl/ctrlmondata.c resctrl_io_alloc_show/_write have it:
//
//   - info/L3/io_alloc reads "enabled" or "disabled"; a write is kstrtobool'd first
//     (garbage: EINVAL, last_cmd_status untouched), and writing the current state does
//     nothing.
//   - "The CLOSID for io_alloc is the highest CLOSID supported by the resource"
//     (resctrl_io_alloc_closid: num_closids - 1, without CDP). Enabling reserves it
//     (closid_alloc_fixed): a control group holding it makes the write fail with ENOSPC
//     and "CLOSID (ctrl_hw_id) N for io_alloc is used by NAME group"; once reserved, mkdir
//     of a control group cannot have it, so one class fewer can exist ("Out of CLOSIDs",
//     ENOSPC, when the rest are taken). Disabling frees it (closid_free).
//   - Monitoring groups need no CLOSID of their own: io_alloc takes no RMID.

// ioAllocCLOSID is the CLOSID io_alloc reserves: the highest.
func (m *model) ioAllocCLOSID() int { return m.opts.NumCLOSIDs - 1 }

func (m *model) renderIOAlloc() string {
	if m.ioAlloc {
		return "enabled\n"
	}
	return "disabled\n"
}

// writeIOAlloc is resctrl_io_alloc_write().
func (m *model) writeIOAlloc(data []byte) syscall.Errno {
	enable, ok := kstrtobool(data)
	if !ok {
		return syscall.EINVAL
	}
	m.lastCmd = "ok"
	if enable == m.ioAlloc {
		return 0
	}
	id := m.ioAllocCLOSID()
	if !enable {
		m.closids.release(id)
		m.ioAlloc = false
		return 0
	}
	if id < 1 {
		// The root's CLOSID 0 is never free: resctrl_io_alloc_closid_supported().
		return m.fail(syscall.EINVAL, "io_alloc CLOSID (ctrl_hw_id) %d is not available", id)
	}
	if !m.closids.take(id) {
		name := "another"
		for _, g := range m.root.ctrls {
			if g.closid == id {
				name = g.name
			}
		}
		return m.fail(syscall.ENOSPC, "CLOSID (ctrl_hw_id) %d for io_alloc is used by %s group", id, name)
	}
	m.ioAlloc = true
	return 0
}

// take removes id from the free ids (closid_alloc_fixed), reporting whether it was free.
func (p *idPool) take(id int) bool {
	i := slices.Index(p.free, id)
	if i < 0 {
		return false
	}
	p.free = slices.Delete(p.free, i, i+1)
	return true
}
