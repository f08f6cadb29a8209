// Package resctrlfs is Linux resctrl as the project uses it, the one seam between what
// lib/lifecycle decides and the file system. The kernel's rules it works under are written
// here, once (Documentation/filesystems/resctrl.rst, fs/resctrl); the code that applies them
// links to the section by name.
//
// # Groups
//
// resctrl is an in-memory file system (mount -t resctrl resctrl /sys/fs/resctrl). Its root is
// the default group: every task not moved elsewhere. A monitoring group is a directory under
// mon_groups/, of the root or of an allocation class (a control group, CLOS: <class>/, whose
// own tasks file holds the class's tasks). mkdir of a monitoring group gives it an RMID, the
// hardware's tag for whose cache and memory traffic is counted, and the kernel fills the
// directory itself (tasks, cpus, mon_data/...). A reboot or a re-mount loses every group; so
// does a runtime that sets up RDT classes (it deletes empty groups). The project names a
// group by Addr (class and name) and keeps one group, one RMID, for a pod's whole life: a new
// RMID can carry counts of its last owner, a false spike downstream.
//
// # RMIDs and limbo
//
// RMIDs are few (info/L3_MON/num_rmids, the root group's among them). With none free, mkdir
// fails with ENOSPC, and info/last_cmd_status reads "Out of RMIDs" (ErrNoRMID). rmdir frees the
// RMID, but while llc_occupancy is monitored it goes to the kernel's limbo first, whatever its
// occupancy (free_rmid in fs/resctrl/monitor.c): a worker, once a second, frees each RMID in
// limbo whose llc_occupancy has fallen below info/L3_MON/max_threshold_occupancy. While every
// free RMID is in limbo, mkdir fails with EBUSY. So a group removed to make room is not usable
// by the very next mkdir (LimboThreshold).
//
// # Tasks
//
// Writing a thread id to a group's tasks file moves that one thread, and only it, into the
// group: one id per write(2), the kernel parses the first and says nothing of the rest.
// Sibling threads and children that exist already stay where they are; a task created after
// the move (fork, clone) is born in the group of the task that creates it, and stays there
// across execve. A task is in one group at a time: moving it into a group takes it out of
// the one it was in. An id that does not exist (in the writer's PID namespace) is ESRCH,
// garbage is EINVAL, and last_cmd_status says why. Reading tasks lists the thread ids in the
// group now. So a container is counted from its first instruction only if every thread of its
// init is moved before it runs: after execve only the thread that called it survives, with its
// own group (TaskWriter; the fork race a late writer loses).
//
// # Classes
//
// A task written into a monitoring group must already be in the group's class (the root for
// mon_groups/ of the root): otherwise the write fails with EINVAL, "Can't move task to
// different control group" (ErrClassMismatch, when goresctrl's check finds it first). Writing
// into a class's own tasks file moves a task between classes. So a pod's group lives under
// the class its runtime put the containers in (linux.intelRdt.closID, applied before the
// createRuntime hooks), and containers of one pod in different classes cannot share a group.
// runc moves only the init's leader into the class: its other threads are refused, and they
// end at execve anyway.
//
// # Removal
//
// rmdir of a monitoring group frees its RMID (see "RMIDs and limbo") and its counters, whoever
// made it, and moves its tasks back to the parent: the class's own group, their class kept.
// rmdir of a class removes its monitoring groups too, and moves their tasks to the root group.
// A tasks file opened before the group was removed fails every write after it (ENOENT, ENODEV:
// stale), and a group made again under the same name is another file.
//
// # Counters
//
// mon_data/ holds a directory per monitoring domain (mon_L3_NN per L3 cache, mon_sub_L3_NN per
// Sub-NUMA node inside it; mon_PERF_PKG_NN per package for Intel AET), a file per event:
// llc_occupancy (bytes now in the cache, a gauge), mbm_total_bytes and mbm_local_bytes (bytes
// of memory traffic, cumulative, and may step back when the hardware wraps or an RMID is
// reused). A file can read "Unavailable", "Error" or "Unassigned" in place of a number: no
// sample, never a zero (MonReader, Reading, Missing).
//
// # Counter assignment
//
// On AMD processors with ABMC (Linux ≥ 6.18) and Arm MPAM, resctrl may be in mbm_event mode
// (info/L3_MON/mbm_assign_mode): a group's bandwidth events count only while a hardware
// counter is assigned to them, from each L3 domain's few (num_mbm_cntrs,
// available_mbm_cntrs), and read "Unassigned" otherwise. A group gets counters at mkdir
// when mbm_assign_on_mkdir says so and there are some left, and gives them back at rmdir; a
// line written to its mbm_L3_assignments ("<event>:<domain>=e" or "=_", "*" for every
// domain) takes or gives one back. MPAM's mode may be fixed, its event filters read-only.
//
// # What is here
//
//   - the mount check (Check, CheckSimulator, MountFor): a path is a real resctrl mount, or
//     the tests' simulator where the configuration says so, before anything writes to it,
//     and the kernel's explanation of the last failed command (info/last_cmd_status);
//   - monitoring groups (Groups, implemented in lib/resctrlfs/kernel through goresctrl's
//     pkg/monitor, the only package that links goresctrl, opened through an Opener the
//     binaries hand on; its errors come out as this package's sentinels, errors.go):
//     made, found, removed, their tasks written (TaskWriter: FileTaskWriter keeping one open
//     tasks file per group, tasksfiles.go; AsideTaskWriter in a vfork child, for the hook);
//   - the counters (MonReader and Reading, mondata.go): every monitoring domain's files,
//     with a missing sample said as such, never a zero;
//   - the kernel's limbo (ReadLimboThreshold): whether a removal frees an RMID at once;
//   - counter assignment: the mode (ReadAssignment) and each group's assignments
//     (ReadGroupAssignment, WriteAssignment).
package resctrlfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNotResctrl is wrapped by Check's errors when the path is not a usable resctrl mount.
var ErrNotResctrl = errors.New("not a resctrl mount")

// ErrNotMounted (which wraps ErrNotResctrl) is wrapped when there is no resctrl at the path at
// all: no such directory, or another filesystem. On a host without RDT, or before resctrl is
// mounted, that is a state a periodic job can skip, where a symlink or a resctrl without
// monitoring is a fault to report.
var ErrNotMounted = fmt.Errorf("%w: resctrl not mounted there", ErrNotResctrl)

// ErrSimulator (which wraps ErrNotResctrl) is wrapped by Check's error when the path is the
// project's resctrl simulator, which only CheckSimulator accepts.
var ErrSimulator = fmt.Errorf("%w: a resctrl simulator (FUSE) is mounted there; set resctrlSimulator: true to use it (demos and tests only)", ErrNotResctrl)

// SimulatorFiles is how the project's resctrl simulator (test/resctrlsim), which hosts
// without RDT hardware use in resctrl's place, signs its statfs: a FUSE mount whose f_files is
// resctrl's magic number. The statfs call is made anyway, so telling the two apart costs
// nothing; reading /proc/self/mountinfo for the simulator's type did, on every hook call.
const SimulatorFiles = unix.RDTGROUP_SUPER_MAGIC

// Mount is a mount check, injected where resctrl is opened: Check in production,
// CheckSimulator where the configuration allows the simulator (MountFor).
type Mount func(root string) error

// MountFor is the check a configuration asks for: the resctrlSimulator key (simulator) opts
// in to the simulator. Opt-in, so that no production binary writes to a FUSE file system
// that merely signs itself as the simulator.
func MountFor(simulator bool) Mount {
	if simulator {
		return CheckSimulator
	}
	return Check
}

// Check verifies that root is a resctrl mount with monitoring: a real directory (not a
// symlink, which could point anywhere), the resctrl filesystem by its statfs magic (as runc's
// intelrdt finds it), and info/L3_MON present. The simulator is refused with ErrSimulator.
func Check(root string) error { return check(root, false) }

// CheckSimulator is Check that also accepts the project's resctrl simulator by its signature
// (SimulatorFiles): for demos and tests on hosts without RDT (the resctrlSimulator key).
func CheckSimulator(root string) error { return check(root, true) }

func check(root string, simulatorOK bool) error {
	if !filepath.IsAbs(root) {
		return fmt.Errorf("resctrl root %q: %w: not an absolute path", root, ErrNotResctrl)
	}
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("resctrl root %s: %w: %w", root, ErrNotMounted, err)
	}
	if err != nil {
		return fmt.Errorf("resctrl root %s: %w: %w", root, ErrNotResctrl, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("resctrl root %s: %w: it is a symlink", root, ErrNotResctrl)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return fmt.Errorf("resctrl root %s: statfs: %w", root, err)
	}
	simulator := st.Type == unix.FUSE_SUPER_MAGIC && st.Files == SimulatorFiles
	if simulator && !simulatorOK {
		return fmt.Errorf("resctrl root %s: %w", root, ErrSimulator)
	}
	if st.Type != unix.RDTGROUP_SUPER_MAGIC && !simulator {
		return fmt.Errorf("resctrl root %s: %w (filesystem magic %#x; mount it with: mount -t resctrl resctrl %s)", root, ErrNotMounted, st.Type, root)
	}
	if _, err := os.Stat(filepath.Join(root, "info", "L3_MON")); err != nil {
		return fmt.Errorf("resctrl root %s: %w: no monitoring support (info/L3_MON): %w", root, ErrNotResctrl, err)
	}
	return nil
}

// LastCmdStatus returns the kernel's text about the last failed resctrl command, or "" when
// it cannot be read. Errors are worth more with it: "Out of RMIDs", "No task 42".
func LastCmdStatus(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "info", "last_cmd_status"))
	if err != nil || len(b) > 4096 {
		return ""
	}
	return strings.TrimSpace(string(b))
}
