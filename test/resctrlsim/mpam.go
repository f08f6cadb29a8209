package resctrlsim

import "syscall"

// Arm MPAM's fixed counter assignment (Options.MPAMFixed). MPAM's bandwidth monitors are made
// assignable to emulate ABMC, and the MPAM driver keeps resctrl in "mbm_event" mode for good:
// it sets struct resctrl_mon's mbm_cntr_assign_fixed and leaves mbm_cntr_configurable false.
// What fs/resctrl does with those two properties, as Linux v7.2 has it (torvalds/linux
// c61f47985249, 2026-06-16):
//
//   - ee3d4c81d89c "fs/resctrl: Add monitor property 'mbm_cntr_assign_fixed'"
//     (fs/resctrl/monitor.c): resctrl_mbm_assign_mode_show() prints only the current mode,
//     "[mbm_event]", and not the other one; resctrl_mbm_assign_mode_write() refuses a switch
//     ("enable != resctrl_arch_mbm_cntr_assign_enabled(r)") with -EINVAL and last_cmd_status
//     "Counter assignment mode is not configurable". Writing the current mode, or garbage,
//     is answered as before (the checks come first): "mbm_event\n" succeeds and changes
//     nothing, anything else is "Unsupported assign mode".
//   - 94a1206522d1 "x86,fs/resctrl: Create 'event_filter' files read only if they're not
//     configurable" (fs/resctrl/rdtgroup.c, monitor.c): info/L3_MON/event_configs/*/event_filter
//     is created read only. The simulator's event_filter files are read only in every mode
//     (0444, EACCES on an open for writing), so nothing changes here; the kernel's answer to a
//     write after a chmod was not read and is not modelled.
//
// Everything else is mbm_event mode as fs/resctrl has it for any arch with assignable
// counters (resctrl_l3_mon_resource_init() creates num_mbm_cntrs, available_mbm_cntrs,
// mbm_assign_on_mkdir, event_filter and mbm_L3_assignments when mbm_cntr_assignable): see
// assign.go. Not modelled: what the MPAM driver itself offers, which is not in mainline
// (RFC "arm_mpam: resctrl: Pre-allocate assignable monitors", Ben Horgan, March 2026: only
// mbm_total_bytes, counters halved with CDP); the simulator keeps both MBM events.

// assignModeFixed reports whether the counter assignment mode cannot be switched.
func (m *model) assignModeFixed() bool { return m.opts.MPAMFixed }

// refuseFixedSwitch is the mbm_cntr_assign_fixed check of resctrl_mbm_assign_mode_write(),
// made only when the write asks for the mode that is not the current one.
func (m *model) refuseFixedSwitch(enable bool) (syscall.Errno, bool) {
	if !m.assignModeFixed() || enable == m.assign.enabled {
		return 0, false
	}
	m.lastCmd = "Counter assignment mode is not configurable"
	return syscall.EINVAL, true
}
