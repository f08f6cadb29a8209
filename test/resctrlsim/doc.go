// Package resctrlsim is a FUSE filesystem that behaves like the Linux kernel's resctrl
// (/sys/fs/resctrl) for monitoring: groups made by mkdir allocate RMIDs, tasks files move one
// thread per write and refuse what the kernel refuses, new tasks inherit their creator's group
// in the order the kernel's proc connector reports forks, and mon_data counters follow the CPU
// time that the member tasks really use.
//
// It simulates semantics, not cache hardware: the counter values are a function of CPU time,
// chosen so that busy and idle groups differ and cumulative counters never step back.
//
// Hosts without RDT hardware (CI, laptops) use it to prove, through real syscalls and real
// container runtimes, what the project promises on real resctrl.
package resctrlsim
