package resctrlfs

import (
	"sync"
	"time"
)

// LayoutTTL is how long MonReader trusts a listing of mon_data: a monitoring domain that
// comes online (a CPU package brought up) shows within it.
const LayoutTTL = 30 * time.Second

// MonReader reads groups' counters (see listMonData), with the listing of mon_data done
// once per mount instead of once per group and read. Every group of a mount has the same
// mon_data layout (the kernel makes each group's from the mount's monitoring domains, and
// adds or removes a domain's directory in every group at once), and listing it was two
// directory reads per domain of every group at each snapshot and scrape: more than half the
// file operations of a pod's .begin and .end. A counter file that is not there (a domain
// gone offline, or the group gone) makes it list again at once; past LayoutTTL it lists
// again too. The zero value is ready; it is safe for concurrent use.
type MonReader struct {
	// Subdomains reads the SNC nodes' files (mon_data/mon_L3_XX/mon_sub_L3_YY/) too, as
	// Readings with Sub set; without it only each domain's own (with SNC: summed) files.
	// Set it before the first Read.
	Subdomains bool

	mu     sync.Mutex
	layout []monFile
	learnt time.Time
	now    func() time.Time // time.Now; a test's clock
}

// Read reads every counter of the group at dir (an absolute group directory): readings,
// and the counters with no sample and why; a group that vanished is an error wrapping
// os.ErrNotExist. A fresh MonReader lists mon_data on its first read.
func (r *MonReader) Read(dir string) ([]Reading, []Missing, error) {
	if layout := r.cached(); layout != nil {
		if readings, missing, complete := readLayout(dir, layout); complete {
			return readings, missing, nil
		}
	}
	readings, missing, layout, err := listMonData(dir, r.Subdomains)
	if err == nil {
		r.learn(layout)
	}
	return readings, missing, err
}

// cached returns the layout while it is fresh, nil otherwise.
func (r *MonReader) cached() []monFile {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.layout == nil || r.clock().Sub(r.learnt) > LayoutTTL {
		return nil
	}
	return r.layout
}

// learn keeps layout; one with no counter file is not kept (a mount with no monitoring has
// nothing to save, and an empty listing must not stand for the others).
func (r *MonReader) learn(layout []monFile) {
	if len(layout) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.layout, r.learnt = layout, r.clock()
}

func (r *MonReader) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}
