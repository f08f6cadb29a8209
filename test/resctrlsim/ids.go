package resctrlsim

import (
	"syscall"
	"time"
)

// idPool hands out RMIDs or CLOSIDs. Id 0 is the root group's and never free. Freed ids go
// to the tail (least recently used first, as the kernel's rmid_free_lru does), after an
// optional stay in limbo.
type idPool struct {
	free  []int
	limbo []limboID
	delay time.Duration
}

type limboID struct {
	id    int
	clean time.Time // when the id's cache occupancy has drained
}

func newIDPool(n int, limbo time.Duration) *idPool {
	p := &idPool{delay: limbo}
	for id := 1; id < n; id++ {
		p.free = append(p.free, id)
	}
	return p
}

// alloc returns a clean id. Like the kernel's resctrl_find_free_rmid: EBUSY when only dirty
// ids remain, ENOSPC when there are none at all.
func (p *idPool) alloc(now time.Time) (int, error) {
	p.drain(now)
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

func (p *idPool) release(id int, now time.Time) {
	if p.delay <= 0 {
		p.free = append(p.free, id)
		return
	}
	p.limbo = append(p.limbo, limboID{id: id, clean: now.Add(p.delay)})
}

// drain moves the ids whose limbo time has passed to the free list, oldest first.
func (p *idPool) drain(now time.Time) {
	kept := p.limbo[:0]
	for _, l := range p.limbo {
		if now.Before(l.clean) {
			kept = append(kept, l)
			continue
		}
		p.free = append(p.free, l.id)
	}
	p.limbo = kept
}

func (p *idPool) inLimbo(now time.Time) int {
	p.drain(now)
	return len(p.limbo)
}
