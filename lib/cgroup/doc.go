// Package cgroup is where resctrl-mon learns which cgroups a process is in, and where a
// cgroup v2 directory is, for every caller: the hook's check that an init is its container's,
// reconcile's and the NRI adapter's search for a container's processes, the record of a
// container's cgroup v2 path, and the pressure readers' directories. One parser of
// /proc/<pid>/cgroup, one matcher of a spec's linux.cgroupsPath, one index of every
// process's cgroups, all through Host, which names the procfs to read: tests give a tree of
// their own, and nothing here is global.
//
// /proc/<pid>/cgroup has a line per hierarchy, "hierarchy-ID:controller-list:cgroup-path";
// the unified (v2) hierarchy's is "0::<path>", on a pure v2 host and on a v1/v2 hybrid one
// alike, relative to the reader's cgroup namespace (so it starts with "/.." for a cgroup
// outside it). The directory of a v2 cgroup is found through the cgroup2 mounts in
// mountinfo, pure v2 (/sys/fs/cgroup) or hybrid (/sys/fs/cgroup/unified); a process in
// another cgroup namespace, as a container's is to a sidecar in the same pod, is reached
// through its own cgroup2 mount under /proc/<pid>/root.
package cgroup
