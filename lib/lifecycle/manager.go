// Package lifecycle is what resctrl-mon decides about a pod's monitoring group, once, for
// every front end (the OCI hook, the NRI adapter, reconcile): which group a container belongs
// to, creating it with one RMID for the pod's whole life, moving every thread of the
// container's init into it before the container runs, and removing it only when the pod is
// gone. The resctrl mechanics are goresctrl's pkg/monitor.
package lifecycle

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/intel/goresctrl/pkg/monitor"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/state"
)

var (
	// ErrNoRMIDs: the kernel has no free (clean) RMID.
	ErrNoRMIDs = errors.New("no free RMID")
	// ErrClassMismatch: the container's allocation class is not its pod group's.
	ErrClassMismatch = errors.New("allocation class mismatch")
	// ErrSpoofed: the container's claimed pod does not match what the runtime recorded.
	ErrSpoofed = errors.New("pod identity refused")
	// ErrForeign: a group of that name exists and resctrl-mon did not make it.
	ErrForeign = errors.New("group exists and is not ours")
	// ErrBadInput: the runtime's state or the container's spec is unusable.
	ErrBadInput = errors.New("bad input")
)

// lockTimeout bounds the wait for a pod's lock: hooks of one pod are short, so a longer
// wait means something is wrong, and the runtime is waiting on us.
const lockTimeout = 5 * time.Second

// Manager carries the configuration, the state directory and the clock: one handle, no
// globals, so every test can run in parallel.
type Manager struct {
	cfg   config.Config
	store *state.Store
	mon   *monitor.Manager
	log   *slog.Logger
	now   func() time.Time
}

// New checks the resctrl root and opens the state directory.
func New(cfg config.Config, log *slog.Logger) (*Manager, error) {
	if err := resctrlfs.Check(cfg.ResctrlRoot); err != nil {
		return nil, err
	}
	store, err := state.Open(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	mon, err := monitor.New(monitor.Options{
		ResctrlRoot:      cfg.ResctrlRoot,
		KeyValidator:     ValidGroupName,
		KeyCanonicalizer: canonicalGroupName,
	})
	if err != nil {
		return nil, fmt.Errorf("resctrl: %w", err)
	}
	return &Manager{cfg: cfg, store: store, mon: mon, log: log, now: time.Now}, nil
}

// Store is the manager's state directory (for status and reconcile).
func (m *Manager) Store() *state.Store { return m.store }

// ValidGroupName reports whether name is a group name resctrl-mon makes: a pod UID, a
// podman pod's sandbox id, or "ctr-" and a container id. Nothing else is ever ours.
func ValidGroupName(name string) bool {
	if id, ok := strings.CutPrefix(name, containerPrefix); ok {
		return ocistate.ValidContainerID(id)
	}
	return monitor.PodUIDValidator(name) || identity.IsSandboxID(name)
}

// canonicalGroupName lowercases and dashes pod UIDs only: container ids are case-sensitive.
func canonicalGroupName(name string) string {
	if monitor.PodUIDValidator(name) {
		return monitor.CanonicalizePodUID(name)
	}
	return name
}

// Outcome is what happened to one container, for the log line and the exit code.
type Outcome struct {
	Container string
	Pod       string
	Group     string // path below the resctrl root
	Action    string // created, joined, skipped, pending, left, idle, removed, kept
	Threads   int    // threads moved
	Detail    string
}
