package wrapper

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/aside"
	"github.com/resctrl-mon/resctrl-mon/lib/logging"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// JoinArg is the only argument of the wrapper's joiner: the wrapper's own binary, started by
// an exec to write the wrapper's thread into the pod's group (see lib/aside for why a
// process). execve of a multi-threaded process first ends its other threads, waiting for
// each to leave the kernel: a write given up at the budget on one of the wrapper's threads
// held the exec of the runtime, and `runc exec` (kubelet's exec probes, with their own
// timeouts), for the write's whole latency. In a process of its own the write holds nothing
// of the wrapper's: the wrapper stops waiting at its budget and execs the runtime, or
// refuses under failurePolicy closed.
//
// A write that lands late still places something: a task written into a group keeps it
// across execve, so the runtime that the wrapper became (its main thread, and what that
// thread forks or clones after) is counted in the pod's group from then on; what it started
// before, the exec'd process included, is placed by reconcile, as for an exec not wrapped.
const JoinArg = "resctrl-mon-runtime-join"

// errGone: the wrapper's process ended (the runtime it became has exited) before a late
// write: its pid may be another process's by then, which must not be moved.
var errGone = errors.New("the exec's runtime has ended; not written")

// joinSendTimeout bounds the joiner's log line: a stalled syslog must not keep it.
const joinSendTimeout = time.Second

// joinRequest is what the wrapper sends its joiner on fd 3.
type joinRequest struct {
	Group target `json:"group"`
	Root  string `json:"root"`
	// Simulator is the configuration's resctrlSimulator: the joiner checks the mount as the
	// wrapper's configuration says (resctrlfs.MountFor).
	Simulator bool   `json:"simulator,omitempty"`
	Tid       int    `json:"tid"`    // the wrapper's thread that execs the runtime
	Parent    int    `json:"parent"` // the wrapper's pid, the joiner's parent while it lives
	Container string `json:"container"`
	// Deadline is when the wrapper stops waiting: a joiner that finishes after it logs so.
	Deadline time.Time `json:"deadline"`
	Log      string    `json:"log"`
	StateDir string    `json:"stateDir"`
}

// joinReply is the joiner's outcome, sent on fd 4; the error as its text.
type joinReply struct {
	Err string `json:"err,omitempty"`
}

// JoinIfAsked runs the joiner and exits when the process was started as one (its only
// argument JoinArg). The wrapper's main calls it first, and so does TestMain in every test
// binary that runs an exec, since there the joiner is the test binary itself.
func JoinIfAsked() {
	aside.IfAsked(JoinArg, func(in io.Reader, out io.Writer) int {
		closeInherited()
		return joinMain(in, out)
	})
}

// joinMain is the joiner: it reads one request, writes the task, and replies. If it ends
// after the wrapper's deadline, the wrapper has gone on already: it logs what it did.
func joinMain(in io.Reader, out io.Writer) int {
	var req joinRequest
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "%s joiner: reading the request: %v\n", Prog, err)
		return 2
	}
	// Right before each write: the wrapper (or the runtime it became) is still this
	// process's parent, so its pid is not free to be reused. A write already waiting in the
	// kernel is past this check (the kernel finds the pid once it has its mutex): a runtime
	// that ended meanwhile leaves it ESRCH, unless the pid space wrapped around within that
	// wait (pid_max is 4194304 on systemd hosts) and gave the pid to another process.
	still := func() bool { return os.Getppid() == req.Parent }
	err := req.Group.join(req.Root, resctrlfs.MountFor(req.Simulator), req.Tid, still)
	if time.Now().After(req.Deadline) {
		joinedLate(req, err)
	}
	var r joinReply
	if err != nil {
		r.Err = err.Error()
	}
	// An error here is the wrapper gone on before us: it has reported its budget.
	_ = json.NewEncoder(out).Encode(r)
	return 0
}

// joinedLate logs a join that ended after the wrapper's budget.
func joinedLate(req joinRequest, err error) {
	log, closer := logging.OpenOr(nil, req.Log, Prog, filepath.Join(req.StateDir, "hook.log"), logging.WithSendTimeout(joinSendTimeout))
	defer closer.Close()
	attrs := []any{"command", "exec", "container", req.Container, "group", req.Group.Path,
		"past_budget", time.Since(req.Deadline).Round(time.Millisecond)}
	if err != nil {
		log.Warn("exec's join ended after its budget: not placed", append(attrs, "err", err)...)
		return
	}
	log.Warn("exec's join ended after its budget: the runtime placed late, what it started before is left to reconcile", attrs...)
}

// closeInherited closes the pipes and sockets the joiner inherited from whoever started the
// wrapper (its fds 3 and up are not close-on-exec: `runc exec --preserve-fds` passes some on),
// other than its own request and reply: a joiner stuck in a write must not hold a pipe open
// whose reader waits for its end. The Go runtime's own descriptors are anonymous inodes.
func closeInherited() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 4 {
			continue
		}
		link, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && (strings.HasPrefix(link, "pipe:") || strings.HasPrefix(link, "socket:")) {
			_ = syscall.Close(fd)
		}
	}
}

// joinAside writes tid into g from a joiner process (aside.Start: /dev/null for stdio, a
// session of its own) and waits for its answer until deadline; past it, it returns
// ErrBudget and leaves the joiner to finish on its own. Left behind, it is the runtime's
// child, reaped by it or by whoever adopts it when the runtime ends.
func joinAside(req joinRequest) error {
	c, err := aside.Start(Prog, JoinArg)
	if err != nil {
		return fmt.Errorf("start the joiner: %w", err)
	}
	defer c.Reply.Close()
	if err := c.Send(req); err != nil {
		_ = c.Cmd.Process.Kill()
		_ = c.Cmd.Wait()
		return fmt.Errorf("send the joiner its request: %w", err)
	}
	var r joinReply
	if err := c.Reply.SetReadDeadline(req.Deadline); err != nil {
		return fmt.Errorf("the joiner's reply: %w", err)
	}
	if err := json.NewDecoder(c.Reply).Decode(&r); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("%w: the joiner did not answer in time", ErrBudget)
		}
		return errors.Join(fmt.Errorf("the joiner ended without a reply: %w", err), c.Cmd.Wait())
	}
	// It exits right after its reply: reaped here, not left to the runtime.
	_ = c.Cmd.Wait()
	if r.Err != "" {
		return errors.New(r.Err)
	}
	return nil
}
