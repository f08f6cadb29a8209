package main

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's user notification structures (linux/seccomp.h), which x/sys/unix does not
// have: struct seccomp_data, seccomp_notif and seccomp_notif_resp.
type seccompData struct {
	Nr                 int32
	Arch               uint32
	InstructionPointer uint64
	Args               [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// supervise receives the listener from the filter stage on fd 3 and answers the statfs
// calls of every task under the filter until none is left.
func supervise() error {
	pidFile := filepath.Join(os.Getenv(envDir), "supervisor-"+strconv.Itoa(os.Getpid()))
	defer func() { _ = os.Remove(pidFile) }()
	lf, err := os.OpenFile(filepath.Join(os.Getenv(envDir), "supervisor.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	logger := log.New(lf, fmt.Sprintf("supervisor %d: ", os.Getpid()), log.Ltime|log.Lmicroseconds)

	listener, err := receiveListener()
	if err != nil {
		logger.Print(err)
		return err
	}
	if listener < 0 {
		return nil // the filter stage failed before its filter: nothing to answer
	}
	for {
		fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			logger.Print("poll: ", err)
			return err
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			// A listener that fails otherwise than for a caller gone would fail again at
			// once: the supervisor ends, and the calls under the filter fail (ENOSYS)
			// loudly rather than spin here.
			if err := answer(listener, logger); err != nil {
				logger.Print(err)
				return err
			}
			continue
		}
		if fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
			return nil // no task under the filter is left
		}
	}
}

// receiveListener reads the listener's descriptor from fd 3; -1 at end of file.
func receiveListener() (int, error) {
	defer func() { _ = unix.Close(3) }()
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(3, make([]byte, 1), oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("receive the listener: %w", err)
	}
	if n == 0 && oobn == 0 {
		return -1, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("receive the listener: %d control messages: %w", len(msgs), err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, fmt.Errorf("receive the listener: %d descriptors: %w", len(fds), err)
	}
	return fds[0], nil
}

// answer takes one notification and answers it: statfs("/sys/fs/resctrl") with the
// kernel's answer for that path in the caller's mount namespace, typed resctrl; anything
// else goes on to the kernel as if no filter were there.
func answer(listener int, logger *log.Logger) error {
	var req seccompNotif // RECV wants it zeroed
	if err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&req)); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINTR) {
			return nil // the caller died (or was interrupted) before we read it
		}
		return fmt.Errorf("NOTIF_RECV: %w", err)
	}
	resp := seccompNotifResp{ID: req.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	if st, ok := fakeStatfs(listener, &req); ok {
		if err := writeMem(req.Pid, req.Data.Args[1], unsafe.Slice((*byte)(unsafe.Pointer(&st)), unsafe.Sizeof(st))); err != nil {
			logger.Printf("pid %d: write statfs: %v (left to the kernel)", req.Pid, err)
		} else {
			resp.Flags = 0 // success, val 0: what statfs returns
			logger.Printf("pid %d: statfs %s answered as resctrl", req.Pid, resctrlMount)
		}
	}
	if err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp)); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("NOTIF_SEND: %w", err)
	}
	return nil
}

// fakeStatfs says whether req is statfs of exactly resctrlMount and, if so, what to answer:
// the kernel's statfs of that path as the caller sees it (through /proc/<tid>/root),
// with the type resctrl's. A path the caller cannot stat is left to the kernel.
func fakeStatfs(listener int, req *seccompNotif) (unix.Statfs_t, bool) {
	var st unix.Statfs_t
	if req.Data.Arch != unix.AUDIT_ARCH_X86_64 || req.Data.Nr != unix.SYS_STATFS {
		return st, false
	}
	want := append([]byte(resctrlMount), 0)
	got := make([]byte, len(want))
	if err := readMem(req.Pid, req.Data.Args[0], got); err != nil || !bytes.Equal(got, want) {
		return st, false
	}
	// seccomp_unotify(2): the memory read may be another task's if the caller died and
	// its pid was reused; the id still being valid says it was the caller's.
	if err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&req.ID)); err != nil {
		return st, false
	}
	if err := unix.Statfs(fmt.Sprintf("/proc/%d/root%s", req.Pid, resctrlMount), &st); err != nil {
		return st, false
	}
	st.Type = unix.RDTGROUP_SUPER_MAGIC
	return st, true
}

func readMem(pid uint32, addr uint64, b []byte) error {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.ReadAt(b, int64(addr))
	return err
}

func writeMem(pid uint32, addr uint64, b []byte) error {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(b, int64(addr))
	return err
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}
