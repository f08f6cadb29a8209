package resctrlfake

import (
	"sync"
	"syscall"
)

// Limbo is the fake with the kernel's RMID limbo: an RMID freed by a group's removal (or a
// Remount) stays dirty, its cache lines still counted to it, for the rest of the test, as
// with a limbo time longer than any test (the simulator's LimboTime). While only dirty RMIDs
// are free, mkdir fails with EBUSY and the kernel says "Out of RMIDs", as
// resctrl_find_free_rmid does; with no RMID free at all it is ENOSPC, as in the fake.
type Limbo struct {
	*Resctrl
	mu sync.Mutex // one Ensure at a time: the count it checks is the one it makes
}

// WithLimbo is f with limbo.
func WithLimbo(f *Resctrl) *Limbo { return &Limbo{Resctrl: f} }

// Ensure is the fake's, failing with EBUSY while every free RMID is dirty.
func (l *Limbo) Ensure(name, class string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.Resctrl
	f.mu.Lock()
	p := class + "/mon_groups/" + name
	if class == "" {
		p = "mon_groups/" + name
	}
	_, exists := f.groups[p]
	used, dirty := len(f.groups), len(f.removed)
	f.mu.Unlock()
	if !exists && used < f.rmids && used+dirty >= f.rmids {
		f.FailNext(OpMkdir, 1, syscall.EBUSY)
	}
	return f.Ensure(name, class)
}
