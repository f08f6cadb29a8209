package resctrlsim

import "syscall"

// idPool hands out RMIDs or CLOSIDs. Id 0 is the root group's and never free. Freed ids go
// to the tail (least recently used first, as the kernel's rmid_free_lru does), directly or
// through limbo (limbo.go), which only the limbo worker's pass leaves.
type idPool struct {
	free  []int
	limbo []limboID
}

func newIDPool(n int) *idPool {
	p := &idPool{}
	for id := 1; id < n; id++ {
		p.free = append(p.free, id)
	}
	return p
}

// alloc returns a clean id. Like the kernel's resctrl_find_free_rmid: EBUSY when the free
// list is empty and limbo is not, ENOSPC when both are empty. It never looks at limbo
// itself: only the worker's pass frees a dirty id (cqm_handle_limbo).
func (p *idPool) alloc() (int, error) {
	if len(p.free) == 0 {
		if len(p.limbo) > 0 {
			return 0, syscall.EBUSY
		}
		return 0, syscall.ENOSPC
	}
	id := p.free[0]
	p.free = p.free[1:]
	return id, nil
}

// release frees id at once (no limbo: a CLOSID, or an RMID without llc_occupancy).
func (p *idPool) release(id int) { p.free = append(p.free, id) }

// toLimbo puts a freed id in limbo, as add_rmid_to_limbo does, unconditionally.
func (p *idPool) toLimbo(l limboID) { p.limbo = append(p.limbo, l) }

// pass frees the ids in limbo that clean says are clean, oldest first, and reports how many.
func (p *idPool) pass(clean func(limboID) bool) int {
	kept := p.limbo[:0]
	n := 0
	for _, l := range p.limbo {
		if !clean(l) {
			kept = append(kept, l)
			continue
		}
		p.free = append(p.free, l.id)
		n++
	}
	clear(p.limbo[len(kept):])
	p.limbo = kept
	return n
}
