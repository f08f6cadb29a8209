package resctrlfake

import (
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// The kernel's RMID limbo (fs/resctrl/monitor.c), as the simulator models it
// (test/resctrlsim/limbo.go; the conformance test holds the two to the same words): every RMID
// a removal frees (a Remount's too) is dirty until a pass of the limbo worker reads its
// llc_occupancy below max_threshold_occupancy in every L3 domain; while only dirty RMIDs are
// free, mkdir says EBUSY and "Out of RMIDs", as resctrl_find_free_rmid does, and ENOSPC when
// none is free at all. Simpler than the simulator: no clock, so no worker of its own and no
// decay. A test runs the worker's pass (Pass), or Run runs it on a ticker as the kernel's; and a freed RMID reads what its group read at
// the removal (SetCounters', else the fixture tree's llc_occupancy), or what SetOccupancy
// holds for its path now.

// freedRMID is an RMID a removal freed.
type freedRMID struct {
	path string
	// occ is its group's llc_occupancy readings at the removal when SetCounters gave them;
	// nil: the tree's.
	occ []resctrlfs.Reading
	set bool
}

// free records the RMID of the group at p as freed (f.mu held).
func (f *Resctrl) free(p string, g *group) {
	fr := freedRMID{path: p}
	if g != nil && g.set {
		fr.set = true
		for _, r := range g.readings {
			if r.Name == "llc_occupancy" {
				fr.occ = append(fr.occ, r)
			}
		}
	}
	f.freed = append(f.freed, fr)
}

// SetOccupancy makes the llc_occupancy of the group at path read bytes in every domain, and
// Limbo's read of its RMID once it is removed, until ClearOccupancy: as the simulator's
// SetOccupancy.
func (f *Resctrl) SetOccupancy(path string, bytes uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.occupancy == nil {
		f.occupancy = map[string]uint64{}
	}
	f.occupancy[path] = bytes
}

// ClearOccupancy undoes SetOccupancy: the lines the test held are gone.
func (f *Resctrl) ClearOccupancy(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.occupancy, path)
}

// occupied is readings with SetOccupancy's value for path in place of every llc_occupancy
// (one of mon_L3_00 if they have none: a fake with no tree).
func (f *Resctrl) occupied(path string, readings []resctrlfs.Reading) []resctrlfs.Reading {
	f.mu.Lock()
	v, ok := f.occupancy[path]
	f.mu.Unlock()
	readings = slices.Clone(readings)
	if !ok {
		return readings
	}
	found := false
	for i := range readings {
		if readings[i].Name == "llc_occupancy" {
			readings[i].Value, found = float64(v), true
		}
	}
	if !found {
		readings = append(readings, resctrlfs.Reading{Domain: "mon_L3_00", Name: "llc_occupancy", Value: float64(v), Unit: "By"})
	}
	return readings
}

// Limbo is the fake with the kernel's RMID limbo (see above).
type Limbo struct {
	*Resctrl
	mu sync.Mutex // one Ensure or Pass at a time: the count Ensure checks is the one it makes
	// held keeps every freed RMID dirty for the rest of the test (WithLimbo: the
	// simulator's LimboTime longer than any test).
	held      bool
	threshold uint64
	dirty     []freedRMID
	seen      int // how many of Resctrl.freed are accounted for
}

// defaultThreshold is the simulator's max_threshold_occupancy at mount.
const defaultThreshold = 1 << 20

// WithLimbo is f with limbo where no RMID ever leaves it: the simulator with a LimboTime
// longer than any test.
func WithLimbo(f *Resctrl) *Limbo { return &Limbo{Resctrl: f, held: true, threshold: defaultThreshold} }

// WithOccupancyLimbo is f with the kernel's limbo: an RMID leaves it on a Pass that reads its
// occupancy below the threshold (the simulator with Limbo).
func WithOccupancyLimbo(f *Resctrl) *Limbo { return &Limbo{Resctrl: f, threshold: defaultThreshold} }

// sync takes the RMIDs freed since the last look into limbo (l.mu held).
func (l *Limbo) sync() {
	l.Resctrl.mu.Lock()
	defer l.Resctrl.mu.Unlock()
	l.dirty = append(l.dirty, l.freed[l.seen:]...)
	l.seen = len(l.freed)
}

// Ensure is the fake's, failing with EBUSY while every free RMID is dirty.
func (l *Limbo) Ensure(g resctrlfs.Addr) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sync()
	f := l.Resctrl
	f.mu.Lock()
	_, exists := f.groups[g.Path()]
	used, dirty := len(f.groups), len(l.dirty)
	f.mu.Unlock()
	if !exists && used < f.rmids && used+dirty >= f.rmids {
		f.FailNext(OpMkdir, 1, syscall.EBUSY)
	}
	return f.Ensure(g)
}

// Mkdir is another process's mkdir, with limbo's EBUSY as Ensure's.
func (l *Limbo) Mkdir(path string) error {
	l.mu.Lock()
	l.sync()
	f := l.Resctrl
	f.mu.Lock()
	_, exists := f.groups[path]
	used, dirty := len(f.groups), len(l.dirty)
	f.mu.Unlock()
	l.mu.Unlock()
	if !exists && used < f.rmids && used+dirty >= f.rmids {
		f.FailNext(OpMkdir, 1, syscall.EBUSY)
	}
	return f.Mkdir(path)
}

// Pass is one run of the limbo worker: it frees every dirty RMID whose occupancy reads below
// the threshold in every domain (none while held), and reports how many it freed.
func (l *Limbo) Pass() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sync()
	if l.held {
		return 0
	}
	n := len(l.dirty)
	l.dirty = slices.DeleteFunc(l.dirty, l.clean)
	return n - len(l.dirty)
}

// clean says every llc_occupancy the worker reads of fr is below the threshold.
func (l *Limbo) clean(fr freedRMID) bool {
	f := l.Resctrl
	f.mu.Lock()
	v, set := f.occupancy[fr.path]
	tree := f.tree
	f.mu.Unlock()
	if set {
		return v < l.threshold
	}
	occ := fr.occ
	if !fr.set && tree != "" {
		readings, _, err := f.reader.Read(tree)
		if err != nil {
			return false // the kernel keeps an RMID it cannot read dirty
		}
		for _, r := range readings {
			if r.Name == "llc_occupancy" {
				occ = append(occ, r)
			}
		}
	}
	for _, r := range occ {
		if uint64(r.Value) >= l.threshold {
			return false
		}
	}
	return true
}

// SetThreshold is a write of bytes to info/L3_MON/max_threshold_occupancy (rounded down to
// the counter's 64 KiB, as the simulator's).
func (l *Limbo) SetThreshold(bytes uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.threshold = bytes / (64 << 10) * (64 << 10)
}

// InLimbo is how many freed RMIDs are dirty.
func (l *Limbo) InLimbo() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sync()
	return len(l.dirty)
}

// LimboThreshold is lib/resctrlfs/kernel's: limbo is on, and an RMID leaves it below this many
// bytes of llc_occupancy.
func (l *Limbo) LimboThreshold() (uint64, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.threshold, true, nil
}

// Run runs the worker's pass every interval, as the kernel's (every second) and the
// simulator's do, until stop is called.
func (l *Limbo) Run(every time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l.Pass()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
