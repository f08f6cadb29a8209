// Package top is `resctrl-mon top`: a live per-pod view for a person on the node, read
// through lib/inventory and lib/psi with no Prometheus in between.
//
// A frame is computed from two samples (Sample) taken an interval apart: memory bandwidth
// (mbm_total_bytes, bytes/s summed over the L3 domains), LLC occupancy (llc_occupancy now,
// bytes summed over the L3 domains), energy rate (core_energy, joules/s = watts summed over
// the PERF_PKG domains, Intel AET) and the share of the interval some task of the pod waited
// for CPU, memory or IO (the "some total=" of the pod cgroup's pressure files). Run takes the
// first sample, waits one interval and only then shows a frame: every frame has rates.
//
// A cell is a number, "-", "unassigned" or blank, and never a made-up zero:
//
//   - blank: there is no counter to show: the host has none (no AET, no PSI), the kernel
//     gave no number (Unavailable, Error) or the file could not be read, now or at the
//     previous sample;
//   - "unassigned" (bandwidth only): the kernel runs its bandwidth counters in mbm_event mode
//     (Linux ≥ 6.18) and gave this pod none in some domain: its traffic is not counted;
//   - "-": the counter is there but no rate can be taken this frame: the pod is new since the
//     previous sample, its group began a new life (re-made on a new RMID), or a cumulative
//     counter went down (a group re-made behind resctrl-mon's back, a wrap): a rate over it
//     would be negative or a made-up spike. The next frame has one again.
//
// Nothing here keeps state across samples but the previous Sample, so memory is bounded by
// the number of pods.
package top
