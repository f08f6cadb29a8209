package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// runtimeTimeout bounds each runtime command, so a hung runtime or hook fails the test
// instead of hanging it until go test's own timeout.
const runtimeTimeout = time.Minute

// Runtime drives an OCI runtime binary (runc or crun) with a private state directory (the
// global --root option), so parallel tests never see each other's containers and a test's
// leftovers cannot break the next one.
type Runtime struct {
	// Bin is the runtime's absolute path.
	Bin string
	// Root is the runtime's state directory, removed when the test ends.
	Root string
	// Env is added to the environment of every runtime command.
	Env []string
	// GlobalArgs are given after --root, before the command (--log, --systemd-cgroup, ...).
	GlobalArgs []string

	t    testing.TB
	mu   *sync.Mutex
	live map[string]*Bundle // containers created and not yet deleted, and their bundles
}

// NewRuntime returns a Runtime for bin ("runc" or "crun", found on PATH or in /usr/sbin).
// The test is skipped where bin is missing or the test is not root, unless
// RESCTRLSIM_REQUIRE=1, where it fails. When the test ends every container this Runtime
// created and that still exists is force-deleted. crun needs PrepareCrun on a hybrid cgroup
// machine.
//
// The force-delete of a container is registered when it is created, so it runs before the
// removal of its bundle and of anything else the test set up before creating it (a resctrl
// simulator, a hook's files): poststop hooks run in a world still whole. A Runtime belongs
// to the test that made it: its cleanups run when that test ends.
func NewRuntime(t testing.TB, bin string) *Runtime {
	t.Helper()
	requireRoot(t)
	r := &Runtime{
		t:    t,
		Bin:  lookBin(t, bin),
		Root: shortTempDir(t, "e2e-"+filepath.Base(bin)+"-"),
		mu:   &sync.Mutex{},
		live: map[string]*Bundle{},
	}
	return r
}

// Via returns a Runtime for the same containers (the same state directory) driven through
// another program, such as a runtime wrapper, run with env added to its environment.
func (r *Runtime) Via(bin string, env ...string) *Runtime {
	return &Runtime{Bin: bin, Root: r.Root, Env: env, t: r.t, mu: r.mu, live: r.live}
}

// Exec runs `exec --detach --pid-file F id args...` with the process's stdout and stderr
// appended to the file out, and returns the process's pid as the runtime wrote it.
func (r *Runtime) Exec(id, out string, args ...string) (int, error) {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", r.Name(), id, err)
	}
	defer f.Close()
	pidFile := out + ".pid"
	ctx, cancel := context.WithTimeout(context.Background(), runtimeTimeout)
	defer cancel()
	cmd := r.cmd(ctx, append([]string{"exec", "--detach", "--pid-file", pidFile, id}, args...)...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(out)
		return 0, fmt.Errorf("%s exec %s: %w: %s", r.Name(), id, err, b)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, fmt.Errorf("%s exec %s: %w", r.Name(), id, err)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil {
		return 0, fmt.Errorf("%s exec %s: pid file %q: %w", r.Name(), id, b, err)
	}
	return pid, nil
}

// Command runs a runtime command line as given after the global flags, and returns its
// stdout, stderr and error: for comparing what the runtime says with and without a wrapper.
func (r *Runtime) Command(args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), runtimeTimeout)
	defer cancel()
	var o, e bytes.Buffer
	cmd := r.cmd(ctx, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// cmd is the runtime run with its global flags, then args.
func (r *Runtime) cmd(ctx context.Context, args ...string) *exec.Cmd {
	full := append(append([]string{"--root", r.Root}, r.GlobalArgs...), args...)
	cmd := exec.CommandContext(ctx, r.Bin, full...)
	if len(r.Env) > 0 {
		cmd.Env = append(os.Environ(), r.Env...)
	}
	return cmd
}

// cleanup force-deletes container id if the test left it behind.
func (r *Runtime) cleanup(id string) {
	r.mu.Lock()
	_, live := r.live[id]
	r.mu.Unlock()
	if !live {
		return
	}
	// A create that failed leaves nothing behind: the runtime tore it down.
	if _, err := os.Stat(filepath.Join(r.Root, id)); errors.Is(err, os.ErrNotExist) {
		return
	}
	if err := r.Delete(id, true); err != nil {
		r.t.Errorf("e2e: cleanup: %v", err)
	}
}

// Name is the runtime's binary name, "runc" or "crun".
func (r *Runtime) Name() string { return filepath.Base(r.Bin) }

// Create runs `create --bundle` for the bundle: the container exists, its createRuntime and
// createContainer hooks have run, and its process waits for Start. The container's stdin is
// /dev/null and its stdout and stderr are the bundle's StdoutPath and StderrPath files: a
// pipe would be held open by the container for its whole life, and Create would never
// return.
func (r *Runtime) Create(id string, b *Bundle) error {
	return r.spawn(id, b, "create", "--bundle", b.Dir, id)
}

// Run creates and starts the container in one step, detached; stdio as for Create.
func (r *Runtime) Run(id string, b *Bundle) error {
	return r.spawn(id, b, "run", "--detach", "--bundle", b.Dir, id)
}

// Start starts a created container's process.
func (r *Runtime) Start(id string) error {
	_, err := r.command(id, "start", id)
	return err
}

// Kill sends sig (a name such as "KILL" or "TERM", or a number) to the container's init.
func (r *Runtime) Kill(id string, sig string) error {
	_, err := r.command(id, "kill", id, sig)
	return err
}

// Delete deletes the container; force kills it first if it still runs. Poststop hooks run
// during a delete.
func (r *Runtime) Delete(id string, force bool) error {
	args := []string{"delete"}
	if force {
		args = append(args, "--force")
	}
	if _, err := r.command(id, append(args, id)...); err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.live, id)
	r.mu.Unlock()
	return nil
}

// State returns the runtime's `state` of the container.
func (r *Runtime) State(id string) (specs.State, error) {
	var st specs.State
	out, err := r.command(id, "state", id)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return st, fmt.Errorf("%s state %s: decode %q: %w", r.Name(), id, out, err)
	}
	return st, nil
}

// WaitStatus waits until the container's status is want, for instance "stopped" after Kill.
func (r *Runtime) WaitStatus(id string, want specs.ContainerState, timeout time.Duration) error {
	return poll.Until(timeout, func() error {
		st, err := r.State(id)
		if err != nil {
			return err
		}
		if st.Status != want {
			return fmt.Errorf("%s container %s is %s, not %s", r.Name(), id, st.Status, want)
		}
		return nil
	})
}

// command runs a runtime subcommand about container id that starts no long-lived process,
// and returns its stdout. An error carries the runtime's stderr and what crun's hooks wrote.
func (r *Runtime) command(id string, args ...string) ([]byte, error) {
	hooks := r.hookOutputMark(id)
	ctx, cancel := context.WithTimeout(context.Background(), runtimeTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := r.cmd(ctx, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A hook that leaves a child holding the runtime's stdio must not hang the test.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s%s", r.Name(), strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()), hooks.since())
	}
	return stdout.Bytes(), nil
}

// spawn runs create or run, whose container process inherits the runtime's stdio: files in
// the bundle. An error carries what the runtime wrote to stderr and what crun's hooks wrote.
func (r *Runtime) spawn(id string, b *Bundle, args ...string) error {
	r.mu.Lock()
	_, known := r.live[id]
	r.live[id] = b // before the call: a create that fails half-way may leave state behind
	r.mu.Unlock()
	if !known {
		r.t.Cleanup(func() { r.cleanup(id) })
	}
	op := fmt.Sprintf("%s %s %s", r.Name(), args[0], id)

	stdout, err := os.OpenFile(b.StdoutPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: open container stdout: %w", op, err)
	}
	defer stdout.Close()
	stderr, err := os.OpenFile(b.StderrPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: open container stderr: %w", op, err)
	}
	defer stderr.Close()
	runtimeOut := outputMark{{"", b.StderrPath(), fileSize(b.StderrPath())}}
	hooks := r.hookOutputMark(id)

	ctx, cancel := context.WithTimeout(context.Background(), runtimeTimeout)
	defer cancel()
	cmd := r.cmd(ctx, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr // *os.File: passed as is, no copying goroutine
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s%s", op, err, strings.TrimPrefix(runtimeOut.since(), ": "), hooks.since())
	}
	return nil
}

// hookOutputMark notes how much crun's hooks have written for container id so far.
func (r *Runtime) hookOutputMark(id string) outputMark {
	r.mu.Lock()
	b := r.live[id]
	r.mu.Unlock()
	if b == nil {
		return nil
	}
	var m outputMark
	for _, f := range []struct{ what, path string }{
		{"hook stderr", b.HookStderrPath()},
		{"hook stdout", b.HookStdoutPath()},
	} {
		m = append(m, markedFile{f.what, f.path, fileSize(f.path)})
	}
	return m
}

// outputMark is a set of append-only files and their sizes at some point.
type outputMark []markedFile

type markedFile struct {
	what, path string
	size       int64
}

// since returns what was appended to the files after the mark, as "; what: text" for each
// file that grew, or "" when none did.
func (m outputMark) since() string {
	var b strings.Builder
	for _, f := range m {
		text, err := readFrom(f.path, f.size)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			text = fmt.Sprintf("(unreadable: %v)", err)
		}
		if text = strings.TrimSpace(text); text == "" {
			continue
		}
		if f.what == "" {
			fmt.Fprintf(&b, ": %s", text)
		} else {
			fmt.Fprintf(&b, "; %s: %s", f.what, text)
		}
	}
	return b.String()
}

// fileSize is the size of path, 0 if it does not exist.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readFrom returns the content of path from offset on.
func readFrom(path string, offset int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return "", err
	}
	data, err := io.ReadAll(f)
	return string(data), err
}
