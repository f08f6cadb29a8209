package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// filterAndExec is the filter stage, in its own mount namespace: it puts the simulator at
// /sys/fs/resctrl, installs the statfs filter, sends its listener to the supervisor on fd
// 3 and execs runc with args.
func filterAndExec(args []string) error {
	// The filter goes on every thread (TSYNC); the exec runs on this one.
	runtime.LockOSThread()
	if err := resctrlAtSysFs(os.Getenv(envResctrl)); err != nil {
		return err
	}
	listener, err := installFilter()
	if err != nil {
		return err
	}
	if err := unix.Sendmsg(3, []byte{0}, unix.UnixRights(listener), nil, 0); err != nil {
		return fmt.Errorf("send the listener: %w", err)
	}
	// Neither goes to runc: a listener held by a task under its own filter would keep
	// the supervisor waiting on it.
	_ = unix.Close(listener)
	_ = unix.Close(3)
	runc := os.Getenv(envRunc)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "RDTSHIM_") })
	if err := unix.Exec(runc, append([]string{runc}, args...), env); err != nil {
		return fmt.Errorf("exec %s: %w", runc, err)
	}
	return nil
}

// resctrlAtSysFs binds the simulator's mount dir onto /sys/fs/resctrl. Where the directory
// is missing (no RDT: the kernel makes it only with resctrl support), and sysfs refuses
// mkdir, /sys/fs becomes a tmpfs holding binds of each of its entries (the cgroup
// hierarchy with its mounts, fuse, bpf, ...) and the new directory. The binds are taken
// through a descriptor of the sysfs directory opened before the tmpfs hid it: a lookup
// from it still crosses into the mounts on its entries.
func resctrlAtSysFs(sim string) error {
	if _, err := os.Stat(resctrlMount); err != nil {
		entries, err := os.ReadDir("/sys/fs")
		if err != nil {
			return fmt.Errorf("list /sys/fs: %w", err)
		}
		old, err := unix.Open("/sys/fs", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open /sys/fs: %w", err)
		}
		defer func() { _ = unix.Close(old) }()
		if err := unix.Mount("tmpfs", "/sys/fs", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=755"); err != nil {
			return fmt.Errorf("tmpfs on /sys/fs: %w", err)
		}
		for _, e := range entries {
			to := filepath.Join("/sys/fs", e.Name())
			if e.IsDir() {
				err = os.Mkdir(to, 0o755)
			} else {
				err = os.WriteFile(to, nil, 0o644)
			}
			if err != nil {
				return fmt.Errorf("recreate %s: %w", to, err)
			}
			from := fmt.Sprintf("/proc/self/fd/%d/%s", old, e.Name())
			if err := unix.Mount(from, to, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("bind %s back: %w", to, err)
			}
		}
		if err := os.Mkdir(resctrlMount, 0o755); err != nil {
			return fmt.Errorf("mkdir %s: %w", resctrlMount, err)
		}
	}
	if err := unix.Mount(sim, resctrlMount, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s on %s: %w", sim, resctrlMount, err)
	}
	return nil
}

// installFilter puts every thread under a filter that sends statfs to the user-space
// listener it returns, and lets everything else through. The program, by hand:
//
//	ld  arch; jne AUDIT_ARCH_X86_64 → allow   (another ABI's numbers mean other calls)
//	ld  nr;   jne SYS_STATFS        → allow
//	ret USER_NOTIF
//	allow: ret ALLOW
//
// Being root (CAP_SYS_ADMIN) it needs no no_new_privs, which runc's container would
// inherit.
func installFilter() (int, error) {
	const (
		offNr   = 0 // struct seccomp_data: int nr; __u32 arch; ...
		offArch = 4
	)
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offArch},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 3, K: unix.AUDIT_ARCH_X86_64},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offNr},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_STATFS},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_USER_NOTIF},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// TSYNC_ESRCH: with a listener, TSYNC reports a thread it could not sync as ESRCH (the
	// return value is the listener).
	flags := unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(flags), uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return -1, fmt.Errorf("seccomp(SET_MODE_FILTER, NEW_LISTENER): %w", errno)
	}
	unix.CloseOnExec(int(fd))
	return int(fd), nil
}
