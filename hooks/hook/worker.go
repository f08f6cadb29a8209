package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/aside"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/logging"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// WorkerArg is the only argument of the hook's worker: the hook's own binary, started by the
// hook to do whatever touches resctrl but a join (see lib/aside for why a process). The runtime waits
// for the hook's process to end, so a goroutine given up at the budget still held the hook,
// and the container, until its write returned: past the runtime's timeout, which then failed
// the container whatever the policy. The worker is not the runtime's child and holds none of
// its pipes, so the hook can end at its budget and leave the worker to finish on its own.
const WorkerArg = "resctrl-mon-hook-worker"

// request is what the hook sends its worker on fd 3.
type request struct {
	Stage  string        `json:"stage"`
	State  specs.State   `json:"state"`
	Config config.Config `json:"config"`
	// Deadline is when the hook stops waiting: a worker that finishes after it ran alone.
	Deadline time.Time `json:"deadline"`
}

// message is one line the worker sends back on fd 4: the pod's group as soon as it is
// known, then what it did.
type message struct {
	Group string `json:"group,omitempty"`
	Done  *reply `json:"done,omitempty"`
}

// reply is the worker's outcome, the error as its text (an error's identity does not cross
// a process; Action carries what the front end needs of it).
type reply struct {
	Outcome lifecycle.Outcome `json:"outcome"`
	Action  vocab.Action      `json:"action"`
	Err     string            `json:"err,omitempty"`
}

// WorkIfAsked runs the worker and exits when the process was started as one (its only
// argument WorkerArg). The hook's main calls it first, and so does TestMain in every test
// binary that runs the hook, since there the worker is the test binary itself.
// open is the binary's resctrl implementation (lib/resctrlfs/kernel's Open).
func WorkIfAsked(open resctrlfs.Opener) {
	aside.IfAsked(WorkerArg, func(in io.Reader, out io.Writer) int { return Work(in, out, open) })
}

// Work is the worker: it reads one request, handles it as the hook would, and sends back
// what it did. If it ends after the hook's deadline, the hook has told the runtime already;
// the worker then logs what it did and, for a container it placed, marks the pod
// late-assigned: the container ran before its threads were moved.
func Work(in io.Reader, out io.Writer, open resctrlfs.Opener) int {
	var req request
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "resctrl-mon-hook worker: reading the request: %v\n", err)
		return 2
	}
	log, closer := logging.OpenOr(nil, req.Config.Log, "resctrl-mon-hook", filepath.Join(req.Config.StateDir, "hook.log"),
		logging.WithSendTimeout(workerSendTimeout))
	defer closer.Close()
	enc := json.NewEncoder(out)
	var group string
	o, err := handle(req.Stage, req.State, req.Config, open, log, func(g string) {
		group = g
		_ = enc.Encode(message{Group: g})
	})
	r := reply{Outcome: o, Action: lifecycle.ActionOf(o, err)}
	if err != nil {
		r.Err = err.Error()
	}
	if time.Now().After(req.Deadline) {
		late(req, group, r, log)
	}
	// An error here is the hook gone before us: it has reported its budget.
	_ = enc.Encode(message{Done: &r})
	return 0
}

// late reports a worker that ended after its hook's deadline.
func late(req request, group string, r reply, log *slog.Logger) {
	attrs := []any{"stage", req.Stage, "container", r.Outcome.Container, "group", r.Outcome.Group, "outcome", r.Action,
		"threads", r.Outcome.Threads, "past_budget", time.Since(req.Deadline).Round(time.Millisecond)}
	if r.Err != "" {
		attrs = append(attrs, "err", r.Err)
	}
	if req.Stage == CreateRuntime && r.Err == "" && group != "" {
		if err := lifecycle.MarkLate(req.Config.StateDir, group, r.Outcome.Container, markLateWait); err != nil {
			attrs = append(attrs, "mark_late_err", err)
		}
	}
	log.Warn("hook finished after its budget", attrs...)
}

// Worker is a started worker, waiting for its request. A poststop starts it first thing, so
// that its start (an exec of this binary, about as long as the hook's own) overlaps the
// hook's reading its configuration and stdin.
type Worker struct {
	cmd   *exec.Cmd
	reply *os.File

	mu    sync.Mutex
	child *aside.Child // until the request is sent, or the worker ended
}

// StartWorker starts the hook's binary as its worker (aside.Start: /dev/null for stdio, a
// session of its own).
func StartWorker() (*Worker, error) {
	c, err := aside.Start("resctrl-mon-hook", WorkerArg)
	if err != nil {
		return nil, fmt.Errorf("start the hook's worker: %w", err)
	}
	return &Worker{cmd: c.Cmd, reply: c.Reply, child: c}, nil
}

// Close ends a worker that was given no request (it reads EOF and exits), and reaps it.
func (w *Worker) Close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.child == nil {
		return
	}
	_ = w.child.Request.Close()
	_ = w.reply.Close()
	w.child = nil
	go func() { _ = w.cmd.Wait() }()
}

// send gives the worker its request.
func (w *Worker) send(req request) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.child == nil {
		return errors.New("the hook's worker was ended before its request")
	}
	err := w.child.Send(req)
	w.child = nil
	if err != nil {
		return fmt.Errorf("send the hook's worker its request: %w", err)
	}
	return nil
}

// wait reads the worker's messages until it is done, calling onGroup with the pod's group
// when it is known. A worker that ends without a reply is a failure, with its exit status.
func (w *Worker) wait(onGroup func(string)) (lifecycle.Outcome, vocab.Action, error) {
	defer w.reply.Close()
	dec := json.NewDecoder(w.reply)
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			return lifecycle.Outcome{}, vocab.Failed, errors.Join(fmt.Errorf("the hook's worker ended without a reply: %w", err), w.cmd.Wait())
		}
		if m.Group != "" {
			onGroup(m.Group)
		}
		if m.Done != nil {
			// Reaped aside: its exit is not the hook's business, and a hook process ends
			// before it matters.
			go func() { _ = w.cmd.Wait() }()
			var err error
			if m.Done.Err != "" {
				err = errors.New(m.Done.Err)
			}
			return m.Done.Outcome, m.Done.Action, err
		}
	}
}
