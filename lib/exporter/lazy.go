package exporter

import (
	"sync"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Lazy is a Source that opens the inventory at the first read that can: an exporter
// started at boot, before resctrl is mounted or before any hook made the state dir, serves
// its health (and says why on /healthz) instead of exiting and restarting in a loop.
type Lazy struct {
	cfg   config.Config
	mount resctrlfs.Mount
	mu    sync.Mutex
	inv   *inventory.Inventory
}

var _ Source = (*Lazy)(nil)

// NewLazy returns a Source over the configuration's resctrl root, checked with mount (the
// front end's choice, as inventory.Open takes it), and state dir.
func NewLazy(cfg config.Config, mount resctrlfs.Mount) *Lazy { return &Lazy{cfg: cfg, mount: mount} }

// Open returns the inventory, opening it if it is not yet; the error says why it cannot.
func (l *Lazy) Open() (*inventory.Inventory, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inv != nil {
		return l.inv, nil
	}
	inv, err := inventory.Open(l.cfg, l.mount)
	if err != nil {
		return nil, err
	}
	l.inv = inv
	return inv, nil
}

// Pods implements Source.
func (l *Lazy) Pods(o inventory.Options) ([]inventory.Pod, error) {
	inv, err := l.Open()
	if err != nil {
		return nil, err
	}
	return inv.Pods(o)
}

// RMIDs implements Source.
func (l *Lazy) RMIDs() (inventory.RMIDs, error) {
	inv, err := l.Open()
	if err != nil {
		return inventory.RMIDs{}, err
	}
	return inv.RMIDs()
}

// Assignment implements Source.
func (l *Lazy) Assignment() (resctrlfs.Assignment, error) {
	inv, err := l.Open()
	if err != nil {
		return resctrlfs.Assignment{}, err
	}
	return inv.Assignment()
}

// Counts implements Source.
func (l *Lazy) Counts() (map[string]uint64, error) {
	inv, err := l.Open()
	if err != nil {
		return nil, err
	}
	return inv.Counts()
}
