// Package psi reads cgroup v2 pressure stall information (PSI): the kernel's cpu.pressure,
// memory.pressure and io.pressure files.
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
// Where a cgroup's directory is, is lib/cgroup's (cgroup.Host). Nothing here is global.
package psi
