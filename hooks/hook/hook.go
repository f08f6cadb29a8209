// Package hook is the OCI hook's whole behaviour behind its thin main: read the state and
// the bundle's config.json, turn them into the lifecycle's plain facts (a Placement, a
// Departure), write one log line, and choose the exit code, all inside a time budget. A
// failing createRuntime hook stops the container from starting, so only the fail-closed
// policy ever makes it fail; a poststop hook never fails (runtimes only warn about it). The
// policy's decision is config.FailurePolicy.Decide, the one every front end takes.
// What touches resctrl runs in a child the hook can leave behind: a vfork child per system
// call for a container joining its pod's live group (join.go), a worker process, a second
// start of the hook's binary, for everything else (worker.go).
package hook

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/budget"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/logging"
	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// Stages, spelt as in the OCI runtime spec.
const (
	CreateRuntime = "createRuntime"
	Poststop      = "poststop"
)

// markLateWait bounds the worker's marking a pod late when it ended after the budget.
const markLateWait = 500 * time.Millisecond

// workerSendTimeout bounds each of the worker's log lines: a stalled syslog must not keep
// it, and the pod's lock it may hold, forever.
const workerSendTimeout = time.Second

// ErrBudget: the hook's time budget (config key hookBudget) ran out. It is
// budget.ErrExhausted, the one error of every front end's budget.
var ErrBudget = budget.ErrExhausted

// Run handles one hook call and returns the process's exit code. start is when the process
// started: the runtime's timeout counts from then, and so does the budget. cfgErr is a
// failure to load the configuration: it is reported like any other failure, under the
// policy that could be determined (fail-open unless the loaded part says closed).
//
// Everything that touches resctrl runs in a child (see join and WorkerArg), and Run returns
// when the work is done or when the budget runs out, whichever is first: a runtime kills a
// hook that outlives its own timeout, and for createRuntime that fails the container
// whatever the policy. A child left behind finishes on its own: the container is in the
// record already (it is written before any resctrl call), and the worker, or reconcile,
// completes the pod, marking it late-assigned.
//
// w is a worker started earlier (StartWorker), given its request here; nil starts one when
// the call needs one (it is not a join). A join leaves w unused, and it ends.
func Run(start time.Time, w *Worker, stage string, stdin io.Reader, stderr io.Writer, cfg config.Config, cfgErr error, open resctrlfs.Opener, logOpts ...logging.Option) int {
	// A worker not given its request ends.
	defer w.Close()
	b := budget.Budget{Start: start, Total: time.Duration(cfg.HookBudget)}
	if b.Total <= 0 {
		b.Total = time.Duration(config.Default().HookBudget)
	}
	deadline, tail := b.End(), b.Tail() // marking the pod late (half of it), two log lines (a quarter each)
	log, closer := logging.OpenOr(stderr, cfg.Log, "resctrl-mon-hook", filepath.Join(cfg.StateDir, "hook.log"),
		append([]logging.Option{logging.WithSendTimeout(tail / 4)}, logOpts...)...)
	defer closer.Close()

	type result struct {
		out    lifecycle.Outcome
		action vocab.Action
		err    error
	}
	var id atomic.Value    // the container id, once stdin is read
	var group atomic.Value // the pod's group, once the worker knows it
	// A join goes on past the budget as far as resctrl lets it (see join): settled says it
	// has parked or returned, so the pod's record is what it will be.
	var joining atomic.Bool
	settled := make(chan struct{})
	var settleOnce sync.Once
	settle := func() { settleOnce.Do(func() { close(settled) }) }
	r, late := budget.Run(nil, time.Until(b.Deadline()), func() result {
		// Read stdin to EOF first, whatever happens next: a runtime may fail writing to a
		// hook that stopped reading.
		st, err := ocistate.ReadState(stdin)
		id.Store(st.ID)
		if err == nil {
			err = cfgErr
		}
		if err == nil && stage != CreateRuntime && stage != Poststop {
			err = fmt.Errorf("unknown stage %q (want %s or %s)", stage, CreateRuntime, Poststop)
		}
		if err != nil {
			return result{lifecycle.Outcome{Container: st.ID}, vocab.Failed, err}
		}
		if stage == CreateRuntime {
			joining.Store(true)
			out, err, ok := join(st, cfg, open, log, deadline.Add(-tail), deadline, func(g string) { group.Store(g) }, settle)
			settle()
			if ok {
				if out.Container == "" {
					out.Container = st.ID
				}
				return result{out, lifecycle.ActionOf(out, err), err}
			}
		}
		if w == nil {
			w, err = StartWorker()
		}
		if err == nil {
			err = w.send(request{Stage: stage, State: st, Config: cfg, Deadline: deadline.Add(-tail)})
		}
		if err != nil {
			return result{lifecycle.Outcome{Container: st.ID}, vocab.Failed, err}
		}
		out, action, err := w.wait(func(g string) { group.Store(g) })
		if out.Container == "" {
			out.Container = st.ID
		}
		return result{out, action, err}
	})
	if late != nil {
		c, _ := id.Load().(string)
		markBy := time.Now().Add(tail / 2)
		if joining.Load() {
			// A join records the container, and lets go of the pod's lock, before it
			// parks: wait for that, or the mark would find neither.
			t := time.NewTimer(tail / 2)
			select {
			case <-settled:
			case <-t.C:
			}
			t.Stop()
		}
		if g, _ := group.Load().(string); g != "" && stage == CreateRuntime {
			// The placement may have moved some of the init's threads, or none: either
			// way the container runs before the worker or reconcile completes it.
			if merr := lifecycle.MarkLate(cfg.StateDir, g, c, max(time.Until(markBy), 0)); merr != nil {
				log.Warn("budget: could not mark the pod late-assigned; the worker or reconcile will", "container", c, "err", merr)
			}
		}
		r = result{lifecycle.Outcome{Container: c}, vocab.Failed, fmt.Errorf("%w: %s before the %s hook finished "+
			"(resctrl or the runtime's input is too slow; the rest is kept to report); the container is recorded and its placement completes later",
			ErrBudget, b.Passed(), stage)}
	}
	out, err := r.out, r.err
	attrs := []any{"stage", stage, "container", out.Container, "pod", out.Pod, "group", out.Group,
		"outcome", r.action, "threads", out.Threads, "duration", time.Since(start).Round(time.Microsecond)}
	if out.Detail != "" {
		attrs = append(attrs, "detail", out.Detail)
	}
	v := cfg.FailurePolicy.Decide(config.Call{Err: err, Starts: stage == CreateRuntime})
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	log.Log(context.Background(), v.Level(), "hook", attrs...)
	if v == config.Refuse {
		fmt.Fprintln(stderr, config.Refusal("resctrl-mon: container "+out.Container+" not started", err))
		return 1
	}
	return 0
}

// handle is the worker's whole work; onGroup is told the pod's group before any resctrl
// call that may be slow.
func handle(stage string, st specs.State, cfg config.Config, open resctrlfs.Opener, log *slog.Logger, onGroup func(string)) (lifecycle.Outcome, error) {
	if stage != CreateRuntime && stage != Poststop {
		return lifecycle.Outcome{Container: st.ID}, fmt.Errorf("unknown stage %q (want %s or %s)", stage, CreateRuntime, Poststop)
	}
	m, err := lifecycle.New(cfg, log, open)
	if err != nil {
		return lifecycle.Outcome{Container: st.ID}, err
	}
	m.CountAs(vocab.SourceHook)
	if stage == CreateRuntime {
		return create(m, st, onGroup)
	}
	// The spec, where the bundle still has it (podman's does at poststop), tells a podman
	// pod's infra container, whose end is the pod's end. Without it the container leaves as
	// what its annotations say.
	var spec *specs.Spec
	if st.Bundle != "" {
		spec, _ = ocistate.ReadSpec(st.Bundle)
	}
	idn, _ := identity.FromSpec(st.ID, st.Annotations, ocistate.CgroupsPath(spec))
	out, err := m.Leave(lifecycle.Departure{ContainerID: st.ID, Pod: idn, Annotations: st.Annotations})
	// Housekeeping runs here, never at createRuntime: nothing waits on a poststop.
	if removed, serr := m.MaybeSweep(); serr != nil || len(removed) > 0 {
		log.Info("sweep", "removed", removed, "err", serr)
	}
	return out, err
}

// create turns a createRuntime state into a Placement: the pod from the annotations the
// runtime set (the runtime-trusted fields of an OCI hook) and, for a podman pod's infra
// container, which has no annotation of its pod, its cgroup path; the class from the bundle's
// config.json, and the pid checked against the container's cgroup.
func create(m *lifecycle.Manager, st specs.State, onGroup func(string)) (lifecycle.Outcome, error) {
	p, out, err := placement(st, m.Refuse)
	if err != nil {
		return out, err
	}
	if group := m.GroupOf(p); group != "" {
		onGroup(group)
	}
	return m.Place(p)
}

// placement is create's Placement, or why there is none; refuse reports an identity that
// does not add up (Manager.Refuse records it).
func placement(st specs.State, refuse func(id string, err error) error) (lifecycle.Placement, lifecycle.Outcome, error) {
	out := lifecycle.Outcome{Container: st.ID}
	var p lifecycle.Placement
	if st.Pid <= 0 {
		return p, out, fmt.Errorf("%w: createRuntime state has no pid (%d)", lifecycle.ErrBadInput, st.Pid)
	}
	var spec *specs.Spec
	var specErr error
	if st.Bundle != "" {
		spec, specErr = ocistate.ReadSpec(st.Bundle)
	}
	// A refused identity is reported as such, whatever the bundle.
	idn, err := identity.FromSpec(st.ID, st.Annotations, ocistate.CgroupsPath(spec))
	if err != nil {
		return p, out, refuse(st.ID, err)
	}
	if specErr != nil {
		return p, out, fmt.Errorf("%w: %w", lifecycle.ErrBadInput, specErr)
	}
	cgroup, err := checkCgroup(st.Pid, spec)
	if err != nil {
		return p, out, err
	}
	p = lifecycle.Placement{ContainerID: st.ID, Pid: st.Pid, Pod: idn, Annotations: st.Annotations, Class: ocistate.Class(ocistate.IntelRdt(spec), st.ID), Cgroup: cgroup,
		PodCgroup: identity.PodCgroup(idn, st.ID, ocistate.CgroupsPath(spec)), CgroupsPath: ocistate.CgroupsPath(spec),
		RuntimeGroup: lifecycle.RuncMadeGroup(enableMonitoring(spec), st.Pid)}
	return p, out, nil
}

// enableMonitoring is the spec's linux.intelRdt.enableMonitoring: the runtime (runc ≥ 1.4,
// crun ≥ 1.24) makes a monitoring group of its own for the container.
func enableMonitoring(spec *specs.Spec) bool {
	rdt := ocistate.IntelRdt(spec)
	return rdt != nil && rdt.EnableMonitoring
}
