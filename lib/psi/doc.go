// Package psi reads cgroup v2 pressure stall information (PSI): the kernel's cpu.pressure,
// memory.pressure and io.pressure files, and where a process's or a cgroup's v2 directory is.
//
// A pressure file holds up to two lines,
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// "some" is the share of time at least one task of the cgroup waited for the resource,
// "full" the share of time all its non-idle tasks waited at once; avgN are running averages
// in percent over N seconds, total is cumulative microseconds. cpu.pressure has no "full"
// line before Linux 5.13, and a full line of zeros at the system level. A line that is not
// there is reported as absent (Line.Present false), never as zero: zero would look like an
// idle container.
//
// The directory of a cgroup is found from /proc/<pid>/cgroup (the "0::" line) and the
// cgroup2 mounts in mountinfo, pure v2 (/sys/fs/cgroup) or hybrid (/sys/fs/cgroup/unified).
// A process in another cgroup namespace, as a container's is to a sidecar in the same pod,
// is reached through its own cgroup2 mount under /proc/<pid>/root.
//
// Nothing here is global: Host names the procfs to read, so tests build their own trees.
package psi
