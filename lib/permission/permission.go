// Package permission says why the kernel refused a write to resctrl or the state dir, so
// that an operator knows which knob to turn: an LSM (AppArmor's default container profile,
// SELinux's container_t), a file's owner and mode, a missing capability, a read-only
// mount, or resctrl's own rule on who may move a task.
//
// The errno alone does not say it; the errno and what the writer could do do:
//
//   - EACCES is the VFS permission check's answer (owner, mode) and also every LSM's. A
//     process with CAP_DAC_OVERRIDE (root in a container keeps it by default) passes the
//     mode check on any file, so its EACCES comes from an LSM. AppArmor matches the path as
//     the process sees it: the runtimes' default profiles (containerd's
//     contrib/apparmor/template.go, containers/common's for CRI-O and podman) deny writes
//     under /sys except /sys/fs/cgroup, which covers /sys/fs/resctrl. SELinux matches
//     labels: container_t may not write sysfs_t nor most host directories.
//   - EPERM on resctrl's tasks file is resctrl's own check (rdtgroup_task_write_permission):
//     the writer's effective uid must be root in the host's user namespace or the task's
//     owner, whatever its capabilities; a container in a user namespace fails it. EPERM
//     elsewhere is a capability check (or a seccomp filter).
//   - EROFS: a read-only mount; a container's /sys is read-only unless it is privileged.
package permission

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// Cause is the likely reason for a refusal, a log field and health message word.
type Cause string

// The causes Classify tells apart.
const (
	CauseLSM        Cause = "lsm"        // EACCES for a process the file's mode cannot stop
	CauseFileMode   Cause = "file-mode"  // EACCES for a process without CAP_DAC_OVERRIDE
	CauseTaskOwner  Cause = "task-owner" // EPERM writing a tasks file: not host root, not the task's owner
	CauseCapability Cause = "capability" // EPERM elsewhere
	CauseReadOnly   Cause = "read-only"  // EROFS
	// CauseUnknownWriter: EACCES recorded by another process, whose capabilities this one
	// cannot know (the exporter reading the adapter's failures).
	CauseUnknownWriter Cause = "lsm-or-file-mode"
)

// Process is what the refused writer could do.
type Process struct {
	// Known: false when the writer is another process (a recorded failure).
	Known bool
	// DACOverride: CAP_DAC_OVERRIDE is in the effective set, so no file's mode refuses it.
	DACOverride bool
}

// Denial is a refused write, with its likely cause. It wraps the original error.
type Denial struct {
	Path  string // the path refused, "" when the error names none
	Errno syscall.Errno
	Cause Cause
	Hint  string // what to change, for the operator
	err   error
}

// Error is the original error and the hint.
func (d *Denial) Error() string { return d.err.Error() + " [" + string(d.Cause) + ": " + d.Hint + "]" }

// Unwrap returns the original error.
func (d *Denial) Unwrap() error { return d.err }

// Classify returns the denial err is, if it is one (EACCES, EPERM or EROFS), for a write
// by p.
func Classify(err error, p Process) (*Denial, bool) {
	var errno syscall.Errno
	if err == nil || !errors.As(err, &errno) {
		return nil, false
	}
	path := ""
	var pe *fs.PathError
	if errors.As(err, &pe) {
		path = pe.Path
	}
	d := &Denial{Path: path, Errno: errno, err: err}
	switch errno {
	case syscall.EACCES:
		d.Cause, d.Hint = eacces(path, p)
	case syscall.EPERM:
		d.Cause, d.Hint = eperm(path)
	case syscall.EROFS:
		d.Cause = CauseReadOnly
		d.Hint = fmt.Sprintf("%s is on a read-only mount (a container's /sys is read-only unless privileged): mount the resctrl root and the state dir read-write as hostPath volumes", orWrite(path))
	default:
		return nil, false
	}
	return d, true
}

// Explain returns err with its likely cause appended if it is a refusal (still matching
// errors.Is and errors.As on the original), else err unchanged.
func Explain(err error, p Process) error {
	if d, ok := Classify(err, p); ok {
		return d
	}
	return err
}

func eacces(path string, p Process) (Cause, string) {
	lsm := "AppArmor: " + apparmorHint(path) + "; SELinux: container_t may not write sysfs_t or host directories: run the container as spc_t (seLinuxOptions.type) or load a policy module that allows it"
	switch {
	case !p.Known:
		return CauseUnknownWriter, "EACCES: if the writer runs as root (CAP_DAC_OVERRIDE), an LSM refused it (" + lsm + "); else the file's owner and mode refuse its user"
	case p.DACOverride:
		return CauseLSM, "EACCES for a process with CAP_DAC_OVERRIDE: an LSM refused it. " + lsm
	default:
		return CauseFileMode, "EACCES for a process without CAP_DAC_OVERRIDE: the owner and mode of " + orWrite(path) + " refuse this user; run as root (uid 0) or add CAP_DAC_OVERRIDE"
	}
}

func eperm(path string) (Cause, string) {
	if filepath.Base(path) == "tasks" {
		return CauseTaskOwner, "EPERM moving a task: resctrl lets only root of the host's user namespace, or the task's owner, move it: run as uid 0 without a user namespace (hostUsers: true)"
	}
	return CauseCapability, "EPERM: a capability this process lacks (or a seccomp filter) refused " + orWrite(path) + ": check securityContext.capabilities and seccompProfile"
}

func apparmorHint(path string) string {
	if rule := DefaultProfileDeny(path); rule != "" {
		return fmt.Sprintf("the runtimes' default profile has `deny %s wklx`, which matches %s: give the container the chart's profile (appArmorProfile: Localhost) or mount the resctrl root at a path outside /sys", rule, path)
	}
	return "a profile that does not allow writing " + orWrite(path) + ": allow it in the container's profile (appArmorProfile)"
}

func orWrite(path string) string {
	if path == "" {
		return "the write"
	}
	return path
}

// DefaultProfileDeny returns the rule of the runtimes' default AppArmor profile
// (containerd's and containers/common's alike) that denies writing path, or "". The
// rules leave only /sys/fs/cgr* writable under /sys:
//
//	deny /sys/[^f]*/** wklx, deny /sys/f[^s]*/** wklx, deny /sys/fs/[^c]*/** wklx,
//	deny /sys/fs/c[^g]*/** wklx, deny /sys/fs/cg[^r]*/** wklx
//
// where * is any run of characters but '/', ** any run at all, and a rule needs something
// below the component it names.
func DefaultProfileDeny(path string) string {
	c := strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/")
	if len(c) < 3 || c[0] != "sys" || !strings.HasPrefix(path, "/") {
		return ""
	}
	switch first := c[1]; {
	case first[0] != 'f':
		return "/sys/[^f]*/**"
	case len(first) >= 2 && first[1] != 's':
		return "/sys/f[^s]*/**"
	case first != "fs" || len(c) < 4:
		return ""
	}
	switch second := c[2]; {
	case second[0] != 'c':
		return "/sys/fs/[^c]*/**"
	case len(second) >= 2 && second[1] != 'g':
		return "/sys/fs/c[^g]*/**"
	case len(second) >= 3 && second[:2] == "cg" && second[2] != 'r':
		return "/sys/fs/cg[^r]*/**"
	}
	return ""
}
