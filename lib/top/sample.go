package top

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
)

// Source is what top reads: *inventory.Inventory, or a stand-in in tests.
type Source interface {
	Pods(inventory.Options) ([]inventory.Pod, error)
}

var _ Source = (*inventory.Inventory)(nil)

// Sampler takes samples of every owned group's counters and its pod's pressure.
type Sampler struct {
	src Source
	psi *cgroup.Host // nil when the kernel keeps no PSI (or the caller wants none)
	now func() time.Time

	cgroupRoot cgroup.Root // the cgroup2 mount, once found
	// NoPSI says why there is no pressure ("" when there is): shown once in the header.
	NoPSI string
}

// NewSampler reads src, and pressure through host (nil: none). It checks once whether the
// kernel keeps PSI: a host without it shows blank pressure columns and says why.
func NewSampler(src Source, host *cgroup.Host) *Sampler {
	s := &Sampler{src: src, psi: host, now: time.Now}
	if host == nil {
		s.NoPSI = "pressure not read"
	} else if err := psi.Available(*host); err != nil {
		s.psi, s.NoPSI = nil, err.Error()
	} else {
		s.cgroupRoot.Host = *host
	}
	return s
}

// Sample is one reading of every owned group.
type Sample struct {
	At   time.Time
	Pods []PodSample
	// Err is what could not be read; the rest is in Pods.
	Err error
}

// PodSample is one pod's group and what was read of it.
type PodSample struct {
	Pod inventory.Pod // identity, state and the raw readings
	// Pressure is the "some" total (µs) per resource and cgroup directory read; a file that
	// could not be read is not there.
	Pressure map[psi.Resource]map[string]uint64
}

// Sample reads every group's counters (inventory.Pods with Counters, which reads mon_data
// through resctrlfs.MonReader, as the exporter does) and its pod's pressure totals.
func (s *Sampler) Sample() Sample {
	start := s.now()
	pods, err := s.src.Pods(inventory.Options{Counters: true})
	end := s.now()
	// The counters were read one after the other over [start, end] (a second or more for
	// hundreds of pods): the middle is the best single time for all of them.
	out := Sample{At: start.Add(end.Sub(start) / 2), Pods: make([]PodSample, 0, len(pods)), Err: err}
	root, rerr := s.cgroup2Root()
	if rerr != nil {
		out.Err = errors.Join(out.Err, rerr)
	}
	for _, p := range pods {
		ps := PodSample{Pod: p}
		if root != "" {
			ps.Pressure = readPressure(root, pressureDirs(p))
		}
		out.Pods = append(out.Pods, ps)
	}
	return out
}

// cgroup2Root is where this process sees the cgroup v2 hierarchy, relative to which the
// registry keeps cgroup paths; "" without pressure.
func (s *Sampler) cgroup2Root() (string, error) {
	if s.psi == nil {
		return "", nil
	}
	dir, err := s.cgroupRoot.Dir()
	if err != nil {
		return "", fmt.Errorf("cgroup2 mount for pressure: %w", err)
	}
	return dir, nil
}

// pressureDirs are the cgroups whose pressure stands for the pod's: its own cgroup (the one
// its runtime named as the pod's, inventory.Pod.Cgroup), or, when it named none, each
// container's, of which the frame shows the largest (a lower bound: "some" of the whole pod
// is the union of its containers' waits, not their sum).
func pressureDirs(p inventory.Pod) []string {
	if p.Cgroup != "" {
		return []string{p.Cgroup}
	}
	var out []string
	for _, c := range p.Containers {
		if c.Cgroup != "" {
			out = append(out, c.Cgroup)
		}
	}
	return out
}

func readPressure(root string, cgroups []string) map[psi.Resource]map[string]uint64 {
	if len(cgroups) == 0 {
		return nil
	}
	out := map[psi.Resource]map[string]uint64{}
	for _, cg := range cgroups {
		sample := psi.ReadAll(filepath.Join(root, cg))
		for _, r := range psi.Resources() {
			p, err := sample.Get(r)
			if err != nil || !p.Some.Present {
				continue // gone, PSI off for the cgroup: a blank cell, never a zero
			}
			if out[r] == nil {
				out[r] = map[string]uint64{}
			}
			out[r][cg] = p.Some.Total
		}
	}
	return out
}
