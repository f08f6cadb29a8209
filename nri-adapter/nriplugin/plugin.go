// Package nriplugin is resctrl-mon's NRI plugin (containerd, CRI-O): its handlers only
// translate NRI events into the library's calls, the same ones the OCI hook makes, on the
// same state directory and locks, so hooks and the adapter on one node never fight.
//
//   - StartContainer: the container's init is created and not yet started (containerd gives
//     its pid here): Place, the race-free point.
//     A runtime that gives no pid (CRI-O before 1.36) still has the init alone in the
//     container's cgroup at this point: it is found there, and placed as race-free.
//   - PostStartContainer: only when StartContainer found no init: Place late (every task of
//     the container's cgroup), the pod marked late-assigned.
//   - StopContainer, RemoveContainer: Leave (the group stays for the retention window, so a
//     container re-created in the pod keeps its RMID).
//   - RemovePodSandbox: EndPod (.end snapshot, then the group), unless another live sandbox
//     of the pod UID holds the group.
//   - Synchronize (every start, and after a runtime restart): Reconcile with NRI's pods and
//     containers as the live list, then Sweep.
//
// A timer runs Sweep (housekeeping) between events.
package nriplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"

	"github.com/resctrl-mon/resctrl-mon/lib/budget"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// Plugin is the adapter's state: the configuration and the lifecycle manager it built, which
// Configure may replace (whole, or not at all).
type Plugin struct {
	log *slog.Logger
	mu  sync.RWMutex
	cfg config.Config
	sel config.Selector
	m   *lifecycle.Manager
	// rs is the resctrl every manager reaches (NewWith); nil: each one opens its
	// configuration's resctrlRoot with open.
	rs   resctrlfs.Groups
	open resctrlfs.Opener
	// startErr is why the adapter has no configuration yet (Unconfigured): only one pushed by
	// the runtime can give it one.
	startErr error
	// openLog opens the log a pushed configuration names (SetLogOpener); nil keeps the log.
	openLog  func(config.Config) (*slog.Logger, io.Closer, error)
	logClose io.Closer
	timeouts requestTimeouts
	// refused is why Configure failed the registration: the stub itself may only say the
	// connection closed.
	refused atomic.Pointer[error]
	// seen spares the registry the events NRI sends twice (see seen).
	seen seen
	// workers do every event's work, within its budget.
	workers *budget.Pool
	// pending retries pending pods when an event freed an RMID (see pendingRetry).
	pending pendingRetry
	// health is what its metrics and probes say of the adapter (Collector, Live, Ready).
	health *health
}

var (
	_ stub.ConfigureInterface          = (*Plugin)(nil)
	_ stub.SynchronizeInterface        = (*Plugin)(nil)
	_ stub.StartContainerInterface     = (*Plugin)(nil)
	_ stub.PostStartContainerInterface = (*Plugin)(nil)
	_ stub.StopContainerInterface      = (*Plugin)(nil)
	_ stub.RemoveContainerInterface    = (*Plugin)(nil)
	_ stub.RemovePodInterface          = (*Plugin)(nil)
)

// New checks cfg and opens resctrl (with open, the binary's implementation:
// lib/resctrlfs/kernel's Open) and the state directory: a bad configuration refuses to start.
func New(cfg config.Config, log *slog.Logger, open resctrlfs.Opener) (*Plugin, error) {
	p := &Plugin{log: log, open: open, workers: newWorkers(), health: newHealth()}
	if err := p.apply(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// NewWith is New on a given resctrl, as lifecycle.NewWith: the manager for cfg, and for every
// configuration the runtime pushes later, reaches rs instead of opening resctrlRoot. Tests
// give it the in-memory fake (test/resctrlfake).
func NewWith(cfg config.Config, log *slog.Logger, rs resctrlfs.Groups) (*Plugin, error) {
	p := &Plugin{log: log, rs: rs, workers: newWorkers(), health: newHealth()}
	if err := p.apply(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// Unconfigured is an adapter the runtime started (a pre-registered plugin) whose own
// configuration failed (why): it registers, and works once the runtime pushes a valid one;
// without one its Configure fails the registration with why. open is as New's.
func Unconfigured(log *slog.Logger, why error, open resctrlfs.Opener) *Plugin {
	return &Plugin{log: log, open: open, startErr: why, workers: newWorkers(), health: newHealth()}
}

// SetLogOpener makes a configuration pushed by the runtime also choose the log (a
// pre-registered plugin is started with no arguments and no environment).
func (p *Plugin) SetLogOpener(open func(config.Config) (*slog.Logger, io.Closer, error)) {
	p.openLog = open
}

// apply builds a manager for cfg and swaps it in only when it is whole.
func (p *Plugin) apply(cfg config.Config) (retErr error) {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	sel, err := config.ParseSelector(cfg.PodSelector)
	if err != nil {
		return fmt.Errorf("configuration: podSelector: %w", err)
	}
	log, closer := p.logger(), io.Closer(nil)
	if p.openLog != nil {
		if log, closer, err = p.openLog(cfg); err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
		// A log opened for a configuration that is not taken is closed again.
		defer func() {
			if retErr != nil {
				_ = closer.Close()
			}
		}()
	}
	var m *lifecycle.Manager
	if p.rs != nil {
		m, err = lifecycle.NewWith(cfg, log, p.rs)
	} else {
		m, err = lifecycle.New(cfg, log, p.open)
	}
	if err != nil {
		return err
	}
	m.CountAs(vocab.SourceAdapter)
	p.mu.Lock()
	old := p.logClose
	p.cfg, p.sel, p.m, p.startErr, p.log, p.logClose = cfg, sel, m, nil, log, closer
	p.seen.Reset() // a new manager, maybe another state dir
	p.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	return nil
}

func (p *Plugin) current() (config.Config, config.Selector, *lifecycle.Manager) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.cfg, p.sel, p.m
}

// Configure takes the configuration the runtime pushes (a pre-registered plugin's config
// in the runtime's NRI config dir): a whole config file, as YAML. Empty keeps the one the
// adapter started with. A bad one fails the registration, saying why.
func (p *Plugin) Configure(_ context.Context, text, runtime, version string) (stub.EventMask, error) {
	log := p.logger().With("event", "Configure", "runtime", runtime, "version", version)
	if strings.TrimSpace(text) == "" {
		if _, _, m := p.current(); m == nil {
			log.Error("no usable configuration", "err", p.startErr)
			err := fmt.Errorf("resctrl-mon: no configuration pushed by %s, and its own is unusable: %w", runtime, p.startErr)
			p.refused.Store(&err)
			return 0, err
		}
		log.Info("configured", "config", "the adapter's own")
		return 0, nil
	}
	cfg, err := config.Parse(strings.NewReader(text))
	if err == nil {
		err = p.apply(cfg)
	}
	if err != nil {
		log.Error("configuration pushed by the runtime refused", "err", err)
		err = fmt.Errorf("resctrl-mon: configuration pushed by %s: %w", runtime, err)
		p.refused.Store(&err)
		return 0, err
	}
	p.logger().Info("configured", "event", "Configure", "runtime", runtime, "config", "pushed by the runtime")
	return 0, nil
}

func (p *Plugin) logger() *slog.Logger {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.log
}

// Synchronize reconciles with the runtime's pods and containers as the truth: what was
// missed while the adapter was down is completed (late-assigned), the groups of pods that
// are gone are ended, and nothing that is not ours is touched. Failures are logged, not
// returned: the runtime would drop the plugin, and a partial repair beats none.
func (p *Plugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	start := time.Now()
	cfg, sel, m := p.current()
	log := p.logger().With("event", "Synchronize", "pods", len(pods), "containers", len(ctrs))
	p.seen.Reset() // a (re)connection: what happened meanwhile is the registry's to say
	live, refused := liveContainers(pods, ctrs, sel, checkInit)
	// A first start on a node full of pods can outlast the runtime's patience: past the
	// budget the repair goes on in the background, under the same per-pod locks as events.
	_, late := run(p, "Synchronize", eventBudget(cfg, p.timeouts.get()), func() struct{} {
		for id, err := range refused {
			_ = m.Refuse(id, err)
		}
		// The runtime's pod list proves which sandboxes are gone: their groups end now, as
		// the RemovePodSandbox missed while the adapter was down would have ended them.
		sandboxes := make(map[string]bool, len(pods))
		for _, pod := range pods {
			sandboxes[pod.GetId()] = true
		}
		steps, err := m.Reconcile(live, lifecycle.ReconcileOptions{Sandboxes: sandboxes})
		for _, s := range steps {
			log.Info("reconcile", "action", s.Action, "group", s.Group, "pod", s.Pod, "detail", s.Detail)
		}
		removed, serr := m.Sweep()
		log.Info("synchronized", "live", len(live), "steps", len(steps), "swept", removed, "duration", time.Since(start).Round(time.Microsecond),
			"err", errors.Join(err, serr))
		p.health.synchronized()
		return struct{}{}
	})
	p.health.count("Synchronize", eventOutcome(lifecycle.Outcome{}, late, outcomeOK))
	if errors.Is(late, ErrNotStarted) {
		log.Error("synchronizing not started", "err", overBudget(m, late, "", "nothing was reconciled: missed containers stay unplaced and "+
			"the groups of gone sandboxes stay until the next Synchronize (the adapter's restart); the timer's sweep still ends idle groups and completes pending pods"))
	} else if late != nil {
		log.Warn("synchronizing goes on in the background", "after", time.Since(start).Round(time.Millisecond))
	}
	return nil, nil
}

// StartContainer places the container's created, not yet started init.
func (p *Plugin) StartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	return p.place("StartContainer", pod, ctr, createdInit, false)
}

// PostStartContainer places a container StartContainer could not (no pid was given).
func (p *Plugin) PostStartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	if p.seen.WasPlaced(ctr.GetId()) {
		return nil
	}
	_, _, m := p.current()
	if g, err := m.Store().ContainerGroup(ctr.GetId()); err == nil && g != "" {
		return nil // placed at StartContainer
	}
	return p.place("PostStartContainer", pod, ctr, runningInit, true)
}

// errNoInit: neither the runtime nor the container's cgroup named the process to place.
var errNoInit = errors.New("no init to place")

// place turns the event into a Placement. Only the fail-closed policy fails the container
// (config.FailurePolicy.Decide, the one decision of every front end).
// initOf finds the process to place (see createdInit, runningInit); it runs within the
// event's budget, since it may read every process's cgroup.
func (p *Plugin) place(event string, pod *api.PodSandbox, ctr *api.Container, initOf func(*api.Container) int, late bool) error {
	start := time.Now()
	cfg, sel, m := p.current()
	log := p.requestLog(event, pod, ctr)
	var out lifecycle.Outcome
	var err error
	pid := 0
	idn, ierr := podIdentity(pod)
	switch {
	case ierr != nil:
		err = m.Refuse(ctr.GetId(), ierr)
	case !selected(sel, pod):
		out = lifecycle.Outcome{Container: ctr.GetId(), Pod: idn.PodUID, Action: vocab.Skipped, Detail: "pod labels do not meet podSelector"}
	default:
		idn.ContainerName = ctr.GetName()
		d := eventBudget(cfg, p.timeouts.get())
		r, late := run(p, event, d, func() result {
			pid := initOf(ctr)
			if pid == 0 {
				return result{pid: pid, err: errNoInit}
			}
			cg, err := checkInit(pid, ctr)
			if err != nil {
				return result{pid: pid, err: m.Refuse(ctr.GetId(), err)}
			}
			pl := lifecycle.Placement{ContainerID: ctr.GetId(), Pid: pid, Pod: idn, Cgroup: cg,
				Annotations: annotations(pod, ctr), Class: class(ctr), Late: late, PodCgroup: pod.GetLinux().GetCgroupParent(),
				CgroupsPath: ctr.GetLinux().GetCgroupsPath(), RuntimeGroup: lifecycle.RuncMadeGroup(ctr.GetLinux().GetRdt().GetEnableMonitoring().GetValue(), pid)}
			out, err := m.Place(pl)
			return result{out: out, err: err, pid: pid}
		})
		out, err, pid = r.out, r.err, r.pid
		if late != nil {
			out = lifecycle.Outcome{Container: ctr.GetId(), Pod: idn.PodUID}
			err = overBudget(m, late, "the container is not placed yet (resctrl or the pod's lock is slow); if that fails, the next Synchronize or reconcile completes the pod",
				notPlaced(event, cfg.FailurePolicy.Decide(startCall(event, late))))
		}
	}
	if errors.Is(err, errNoInit) {
		if !late {
			p.health.count(event, outcomeDeferred)
			log.Info("no pid, and not one process in the container's cgroup: placed at PostStartContainer, late", "cgroupsPath", ctr.GetLinux().GetCgroupsPath())
			return nil
		}
		err = fmt.Errorf("%w: the runtime gave no pid at %s, and the container's cgroup (%q) has no process", lifecycle.ErrBadInput, event,
			ctr.GetLinux().GetCgroupsPath())
	}
	p.health.count(event, eventOutcome(out, err, ""))
	attrs := []any{"init", pid, "group", out.Group, "outcome", lifecycle.ActionOf(out, err), "threads", out.Threads, "duration", time.Since(start).Round(time.Microsecond)}
	if out.Detail != "" {
		attrs = append(attrs, "detail", out.Detail)
	}
	v := cfg.FailurePolicy.Decide(startCall(event, err))
	if err == nil {
		if !late && (out.Action == vocab.Created || out.Action == vocab.Joined) {
			p.seen.Placed(ctr.GetId())
		}
	} else {
		attrs = append(attrs, "err", err)
	}
	log.Log(context.Background(), v.Level(), "placed", attrs...)
	if v == config.Refuse {
		return config.Refusal("resctrl-mon: container "+ctr.GetId()+" not started", err)
	}
	return nil
}

// startCall is a placement event as the failure policy sees it: the runtime starts the
// container once StartContainer returns; PostStartContainer places one that runs already.
func startCall(event string, err error) config.Call {
	return config.Call{Err: err, Starts: event == "StartContainer"}
}

// StopContainer: the container leaves its pod's group; the group stays for the retention
// window.
func (p *Plugin) StopContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	if p.leave("StopContainer", pod, ctr) {
		p.seen.Left(ctr.GetId())
	}
	return nil, nil
}

// RemoveContainer: as StopContainer (a container removed without a stop), or nothing when
// its StopContainer's departure went through: a second departure changes nothing.
func (p *Plugin) RemoveContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	if p.seen.Removed(ctr.GetId()) {
		return nil
	}
	p.leave("RemoveContainer", pod, ctr)
	return nil
}

// leave makes the container's departure; it reports whether it went through.
func (p *Plugin) leave(event string, pod *api.PodSandbox, ctr *api.Container) bool {
	start := time.Now()
	cfg, _, m := p.current()
	d := lifecycle.Departure{ContainerID: ctr.GetId(), Annotations: annotations(pod, ctr)}
	if idn, err := podIdentity(pod); err == nil {
		d.Pod = idn
	}
	r, late := run(p, event, eventBudget(cfg, p.timeouts.get()), func() result {
		out, err := m.Leave(d)
		return result{out: out, err: err}
	})
	out, err := r.out, r.err
	if late != nil {
		err = overBudget(m, late, "the departure goes on in the background", notLeft(event))
	}
	p.health.count(event, eventOutcome(out, err, ""))
	if err == nil && freed(out.Action) {
		p.completePendingSoon()
	}
	p.requestLog(event, pod, ctr).Log(context.Background(), notDoneLevel(err), "left", "group", out.Group, "outcome", lifecycle.ActionOf(out, err), "detail", out.Detail,
		"duration", time.Since(start).Round(time.Microsecond), "err", err)
	return err == nil
}

// RemovePodSandbox: the pod is gone. Its group ends unless another live sandbox of the same
// pod UID holds it (kubelet re-created the sandbox before it removed this one).
func (p *Plugin) RemovePodSandbox(_ context.Context, pod *api.PodSandbox) error {
	start := time.Now()
	cfg, _, m := p.current()
	e := lifecycle.PodEnd{SandboxID: pod.GetId()}
	if idn, err := podIdentity(pod); err == nil {
		e.PodUID = idn.PodUID
	}
	r, late := run(p, "RemovePodSandbox", eventBudget(cfg, p.timeouts.get()), func() result {
		out, err := m.EndPod(e)
		return result{out: out, err: err}
	})
	out, err := r.out, r.err
	if late != nil {
		err = overBudget(m, late, "the pod's end goes on in the background", "the pod's group was not ended: the timer's sweep removes it "+
			"once it has been idle past retention (its containers all left), else the next Synchronize (the adapter's restart) ends it")
	}
	p.health.count("RemovePodSandbox", eventOutcome(out, err, ""))
	if err == nil && freed(out.Action) {
		p.completePendingSoon()
	}
	p.requestLog("RemovePodSandbox", pod, nil).Log(context.Background(), notDoneLevel(err), "pod ended", "group", out.Group, "outcome", lifecycle.ActionOf(out, err), "detail", out.Detail,
		"duration", time.Since(start).Round(time.Microsecond), "err", err)
	return nil
}

// Sweep is the housekeeping the timer runs.
func (p *Plugin) Sweep() {
	_, _, m := p.current()
	removed, err := m.Sweep()
	if err != nil || len(removed) > 0 {
		p.logger().Info("sweep", "removed", removed, "err", err)
	}
}

// result is what a lifecycle call returned, through within.
type result struct {
	out lifecycle.Outcome
	err error
	pid int // the process placed, for the log
}

// eventOutcome is an event's outcome label: past its budget or never started, else what
// lifecycle did (ok, when it did nothing nameable).
func eventOutcome(out lifecycle.Outcome, err error, ok string) string {
	switch {
	case errors.Is(err, ErrNotStarted):
		return outcomeNotStarted
	case errors.Is(err, ErrBudget):
		return outcomePastBudget
	case err == nil && ok != "":
		return ok
	}
	return string(lifecycle.ActionOf(out, err))
}

// requestLog is a logger for one event: never a shared one mutated.
func (p *Plugin) requestLog(event string, pod *api.PodSandbox, ctr *api.Container) *slog.Logger {
	attrs := []any{"event", event, "namespace", pod.GetNamespace(), "pod", pod.GetName(), "uid", pod.GetUid()}
	if ctr != nil {
		attrs = append(attrs, "container", ctr.GetName(), "id", ctr.GetId(), "pid", ctr.GetPid())
	}
	return p.logger().With(attrs...)
}
