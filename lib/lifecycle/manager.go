// Package lifecycle is what resctrl-mon decides about a pod's monitoring group, once, for
// every front end: the OCI hook, the NRI adapter and reconcile call it with plain facts
// (a Placement, a Departure, a PodEnd, the live containers), never with a runtime's own
// types. It decides which group a container belongs to, creates it with one RMID for the
// pod's whole life, moves every thread of the container's init into it before the container
// runs, and removes it only when the pod is gone.
//
// It is the write side. Reading (status, the exporter) is lib/inventory, which opens the
// state read-only and takes no lock. Resctrl itself is reached through resctrlfs.Groups
// (goresctrl's pkg/monitor on a real mount), the seam the unit tests fake.
package lifecycle

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
	"github.com/resctrl-mon/resctrl-mon/lib/permission"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

var (
	// ErrSpoofed: the container's claimed pod does not match what the runtime recorded.
	ErrSpoofed = errors.New("pod identity refused")
	// ErrForeign: a group of that name exists and resctrl-mon did not make it.
	ErrForeign = errors.New("group exists and is not ours")
	// ErrBadInput: what the runtime gave is unusable.
	ErrBadInput = errors.New("bad input")
	// ErrGroupGone is what a resctrl that makes no group (the hook's join in its own
	// process: it only joins groups that are there) answers an Ensure of a group that is
	// not there: the pod's group ended since the caller looked (a reclaim, the pod's end).
	// Place takes the container back and records no failure: the caller places it another
	// way.
	ErrGroupGone = errors.New("the pod's group is gone")
)

// lockTimeout bounds the wait for a pod's lock: hooks of one pod are short, so a longer
// wait means something is wrong, and the runtime is waiting on us.
const lockTimeout = 5 * time.Second

// Manager carries the configuration, the state directory, resctrl and the clock: one
// handle, no globals, so every test can run in parallel.
type Manager struct {
	cfg   config.Config
	store *registry.Store
	rs    resctrlfs.Groups
	log   *slog.Logger
	now   func() time.Time
	// cg reads which cgroups processes are in (the host's /proc).
	cg cgroup.Host
	// source is the front end whose outcomes this manager counts.
	source vocab.Source
}

// New checks the resctrl root, opens it with open (the binary's resctrl implementation,
// lib/resctrlfs/kernel's Open) and opens the state directory.
func New(cfg config.Config, log *slog.Logger, open resctrlfs.Opener) (*Manager, error) {
	rs, err := OpenResctrl(open, cfg.ResctrlRoot, resctrlfs.MountFor(cfg.ResctrlSimulator), log)
	if err != nil {
		return nil, err
	}
	return NewWith(cfg, log, rs)
}

// NewWith is New on a given resctrl: tests give it a fake.
func NewWith(cfg config.Config, log *slog.Logger, rs resctrlfs.Groups) (*Manager, error) {
	store, err := registry.Open(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	return &Manager{cfg: cfg, store: store, rs: rs, log: log, now: time.Now, source: vocab.SourceOther}, nil
}

// CountAs names the front end whose outcomes this manager counts.
func (m *Manager) CountAs(s vocab.Source) { m.source = s }

// count adds one to what this front end did, in the state dir where the exporter reads it.
// Counting never fails a call: a count that cannot be written is logged.
func (m *Manager) count(a vocab.Action) {
	if a == "" {
		return
	}
	if err := m.store.Count(vocab.OutcomeCount(m.source, a)); err != nil {
		m.log.Warn("counting an outcome", "err", err)
	}
}

// SetClock replaces the clock (tests, and front ends that share one).
func (m *Manager) SetClock(now func() time.Time) { m.now = now }

// Store is the manager's state directory.
func (m *Manager) Store() *registry.Store { return m.store }

// ValidGroupName reports whether name is a group name resctrl-mon makes: a pod UID, a
// podman pod's sandbox id, or "ctr-" and a container id. Nothing else is ever ours.
func ValidGroupName(name string) bool {
	if id, ok := strings.CutPrefix(name, containerPrefix); ok {
		return ocistate.ValidContainerID(id)
	}
	return resctrlfs.ValidPodUID(name) || identity.IsSandboxID(name)
}

// OpenResctrl is open's view of the resctrl root, keyed by our group names: what New gives
// the Manager, and what a front end with resctrl of its own (the hook's join) falls back to
// for the class check. mount is the configuration's mount check
// (resctrlfs.MountFor(cfg.ResctrlSimulator)).
func OpenResctrl(open resctrlfs.Opener, root string, mount resctrlfs.Mount, log *slog.Logger) (resctrlfs.Groups, error) {
	if open == nil {
		return nil, errors.New("resctrl: no implementation to open it with (a binary hands lib/resctrlfs/kernel's Open)")
	}
	return open(root, mount, ValidGroupName, canonicalGroupName, log)
}

// canonicalGroupName lowercases and dashes pod UIDs only: container ids are case-sensitive.
func canonicalGroupName(name string) string {
	if resctrlfs.ValidPodUID(name) {
		return resctrlfs.CanonicalPodUID(name)
	}
	return name
}

// Outcome is what happened to one container or pod, for the log line and the exit code.
type Outcome struct {
	Container string
	Pod       string
	Group     string // path below the resctrl root
	Action    vocab.Action
	Threads   int // threads moved
	Detail    string
}

// GroupPath is a group's path below the resctrl root.
func GroupPath(class, name string) string { return resctrlfs.GroupPath(class, name) }

// addrOf is the group a record is of: its class and name (its Path is their Path).
func addrOf(rec registry.Record) resctrlfs.Addr {
	return resctrlfs.Addr{Class: rec.Class, Name: rec.Group}
}

// ClassLabel names a class for people: the root group has no name of its own.
func ClassLabel(c string) string {
	if c == "" {
		return "(root)"
	}
	return c
}

func (m *Manager) kernelSays() string { return m.rs.LastCmdStatus() }

func (m *Manager) kernelSaysSuffix() string {
	if s := m.kernelSays(); s != "" && s != "ok" {
		return " (resctrl: " + s + ")"
	}
	return ""
}

// noRMID reports whether err is the kernel saying it has no RMID to give.
func noRMID(err error) bool {
	return errors.Is(err, resctrlfs.ErrNoRMID) || errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.ENOSPC)
}

// recordFailure logs a failure and keeps it for status. subject is the container id when
// there is one, else the group; pod is the pod's UID or group name when known.
func (m *Manager) recordFailure(reason vocab.FailureReason, subject, pod string, err error) {
	// A refused write says whether an LSM or a missing capability refused it: which knob
	// the operator turns.
	err = permission.Explain(err, permission.Self())
	m.log.Warn("failure", "reason", reason, "subject", subject, "pod", pod, "err", err)
	if serr := m.store.RecordFailure(registry.Failure{Time: m.now().UTC(), Reason: string(reason), Subject: subject, Pod: pod,
		Error: strings.TrimSpace(err.Error())}); serr != nil {
		m.log.Warn("recording a failure", "err", serr)
	}
	if serr := m.store.Count(vocab.FailureCount(reason)); serr != nil {
		m.log.Warn("counting a failure", "err", serr)
	}
}

// Refuse records a container whose front end could not establish its pod (its identity
// did not add up) and returns the error to report, wrapping ErrSpoofed.
func (m *Manager) Refuse(containerID string, err error) error {
	m.recordFailure(vocab.FailIdentity, containerID, "", err)
	m.count(vocab.Refused)
	return fmt.Errorf("%w: %w", ErrSpoofed, err)
}
