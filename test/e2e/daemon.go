package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// RuntimeBins returns the bin directory of a runtime that test/runtimes/NAME.sh built into
// the test cache ("crio", "containerd", "crictl"). It never builds: a build takes minutes
// (`make runtimes` or `make test` does it first); where the runtime is not built the test is
// skipped, or fails under RESCTRLSIM_REQUIRE=1.
func RuntimeBins(t testing.TB, name string) string {
	t.Helper()
	script, err := runtimesScript(name)
	if err != nil {
		unavailable(t, "e2e: %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", script, "--print")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		unavailable(t, "e2e: %s is not built (run make runtimes): %v: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out))
}

// runtimesScript finds test/runtimes/NAME.sh above the working directory: go test runs a
// package's tests in the package's directory, somewhere inside the repository.
func runtimesScript(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find test/runtimes: %w", err)
	}
	for {
		p := filepath.Join(dir, "test", "runtimes", name+".sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no test/runtimes/%s.sh above the working directory", name)
		}
		dir = parent
	}
}

// daemon is a long-running runtime process (crio, containerd) started by a test, with its
// output in a log file that a failing test shows.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, once done is closed
}

// startDaemon starts bin with args, its stdout and stderr appended to logPath.
func startDaemon(name, logPath string, env []string, bin string, args ...string) (*daemon, error) {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: open log: %w", name, err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a test interrupted by ^C must not signal it before the cleanup
	// has removed its pods, and the cleanup signals the daemon alone. Pdeathsig: a test
	// binary killed before its cleanups ran (go test's timeout) takes the daemon with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// waitReady calls ready until it succeeds, the daemon exits, or timeout passes.
func (d *daemon) waitReady(timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-d.done:
			exit := d.err
			if exit == nil {
				exit = errors.New("exit status 0")
			}
			return fmt.Errorf("%s exited before it was ready (%w); its log:\n%s", d.name, exit, d.tail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v: %w; its log:\n%s", d.name, timeout, err, d.tail())
		}
		// The daemon announces readiness by nothing but answering; ask again shortly.
		select {
		case <-d.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and waits for the daemon to exit, SIGKILL after timeout.
func (d *daemon) stop(timeout time.Duration) error {
	return d.signal(syscall.SIGTERM, timeout)
}

// signal sends sig and waits for the daemon to exit, SIGKILL after timeout. An exit by sig
// is a clean one.
func (d *daemon) signal(sig syscall.Signal, timeout time.Duration) error {
	if d.exited() {
		return d.exitErr(sig)
	}
	if err := d.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop %s: %w", d.name, err)
	}
	select {
	case <-d.done:
		return d.exitErr(sig)
	case <-time.After(timeout):
	}
	_ = d.cmd.Process.Kill()
	<-d.done
	return fmt.Errorf("stop %s: still running %v after %v; killed", d.name, timeout, sig)
}

// exited reports whether the daemon's process has exited.
func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// exitErr is the daemon's exit as an error, nil for a clean exit or one by sig, which the
// test sent.
func (d *daemon) exitErr(sig syscall.Signal) error {
	var ee *exec.ExitError
	if errors.As(d.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == sig {
			return nil
		}
	}
	if d.err != nil {
		return fmt.Errorf("%s: %w", d.name, d.err)
	}
	return nil
}

// tail returns the last lines of the daemon's log, each cut short (CRI-O logs its whole
// configuration on one line).
func (d *daemon) tail() string {
	b, err := os.ReadFile(d.log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	const maxLines, maxLine = 40, 600
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > maxLines {
		lines = append([]string{"…"}, lines[len(lines)-maxLines:]...)
	}
	for i, l := range lines {
		if len(l) > maxLine {
			lines[i] = l[:maxLine] + "…"
		}
	}
	return strings.Join(lines, "\n")
}

// killMentioning SIGKILLs every process whose command line mentions dir, but not this
// process: the container monitors (conmon, containerd's shims) that a daemon leaves behind
// when its pods were not all removed. Each is named by its own arguments (a bundle, a socket
// or a state directory under dir), so nothing of another test or of the host is touched.
func killMentioning(dir string) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return fmt.Errorf("list processes: %w", err)
	}
	var errs []error
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile
		}
		if !mentions(cmdline, dir) {
			continue
		}
		if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("kill %d (%s): %w", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), err))
		}
	}
	return errors.Join(errs...)
}

// mentions reports whether a NUL-separated command line has an argument that is dir, lies
// under it, or carries it after a "=" or a "unix://" (flag=value, socket addresses).
func mentions(cmdline []byte, dir string) bool {
	for arg := range strings.SplitSeq(string(cmdline), "\x00") {
		if i := strings.Index(arg, dir); i >= 0 {
			rest := arg[i+len(dir):]
			before := arg[:i]
			if (rest == "" || rest[0] == '/') && (before == "" || strings.HasSuffix(before, "=") || strings.HasSuffix(before, "unix://")) {
				return true
			}
		}
	}
	return false
}

// removeCgroup removes the cgroup at path (as /proc/PID/cgroup names it) and its
// descendants from every mounted hierarchy, deepest first. The runtimes remove a
// container's cgroup, never the pod's parent that the test named.
func removeCgroup(path string) error {
	// cgroupDirs gives no hierarchy's root: walking down from there would try every cgroup
	// on the host.
	tops, err := cgroupDirs(path)
	if err != nil {
		return err
	}
	var errs []error
	for _, top := range tops {
		var dirs []string
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("list cgroup %s: %w", top, err))
			continue
		}
		slices.Reverse(dirs) // a walk lists parents first
		for _, d := range dirs {
			if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// deleteRuncContainers force-deletes every container in a private runc root (its
// directories are the container IDs): those a daemon's cleanup could not remove. runc is
// the runc that made them (its state is that version's); PATH's when empty.
func deleteRuncContainers(root, runc string) error {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list runc containers: %w", err)
	}
	if runc == "" {
		if runc, err = exec.LookPath("runc"); err != nil {
			runc = "/usr/sbin/runc"
		}
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		out, err := exec.Command(runc, "--root", root, "delete", "--force", e.Name()).CombinedOutput()
		if err != nil {
			errs = append(errs, fmt.Errorf("runc --root %s delete --force %s: %w: %s", root, e.Name(), err, bytes.TrimSpace(out)))
		}
	}
	return errors.Join(errs...)
}
