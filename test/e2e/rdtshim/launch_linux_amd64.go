package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// launch starts the supervisor and the filter stage (which becomes runc) and returns runc's
// exit status, 128+n for a death by signal n, as a shell says it.
func launch(args []string) (int, error) {
	for _, k := range []string{envRunc, envResctrl, envDir} {
		if os.Getenv(k) == "" {
			return 0, fmt.Errorf("%s is not set", k)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("own path: %w", err)
	}
	// One socket per run: the filter stage sends the listener on its end, the supervisor
	// reads it from the other. Each child gets its end as fd 3; the launcher closes both
	// once they are started, so a filter stage that dies before sending leaves the
	// supervisor an end of file, not a wait.
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("socketpair: %w", err)
	}
	supEnd, filterEnd := os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "filter")
	defer supEnd.Close()
	defer filterEnd.Close()

	// The supervisor outlives this launcher (and runc, with a detached container), so it
	// is in a session of its own and holds none of the caller's stdio: a test reading
	// runc's output through a pipe must see its end when runc exits.
	sup := exec.Command(self)
	sup.Env = append(os.Environ(), envStage+"=supervise")
	sup.ExtraFiles = []*os.File{supEnd}
	sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := sup.Start(); err != nil {
		return 0, fmt.Errorf("start supervisor: %w", err)
	}
	// The pid file is written here, before runc runs, so that whoever waits for the
	// supervisors to end (the test's cleanup) never misses one; the supervisor removes
	// it as it exits.
	pidFile := filepath.Join(os.Getenv(envDir), "supervisor-"+strconv.Itoa(sup.Process.Pid))
	if err := os.WriteFile(pidFile, nil, 0o644); err != nil {
		_ = sup.Process.Kill()
		return 0, fmt.Errorf("supervisor pid file: %w", err)
	}
	_ = sup.Process.Release()

	// Go's fork makes the new mount namespace's mounts private (MS_REC|MS_PRIVATE on /)
	// before the exec: nothing the filter stage mounts reaches the host.
	stage := exec.Command(self, args...)
	stage.Env = append(os.Environ(), envStage+"=filter")
	stage.Stdin, stage.Stdout, stage.Stderr = os.Stdin, os.Stdout, os.Stderr
	stage.ExtraFiles = []*os.File{filterEnd}
	// A launcher killed (a test's timeout) takes runc with it, not leaving it running. The
	// signal is sent when the thread that started the child ends: this one is locked to
	// it, and the process ends with it.
	runtime.LockOSThread()
	stage.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if err := stage.Start(); err != nil {
		return 0, fmt.Errorf("start filter stage: %w", err)
	}
	supEnd.Close()
	filterEnd.Close()
	err = stage.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("filter stage: %w", err)
	}
	return 0, nil
}
