// Package snapshot records a monitoring group's counters at both ends of each of its lives,
// so a passive consumer (energy accounting, billing) can account for a whole pod after its
// resctrl group is gone.
//
// # Files
//
// A group can live more than once under one name: its name is usually the pod UID, and a pod
// whose sandbox is re-created after the group was released gets a new group of the same name.
// Each life is told apart by when it began: the time resctrl-mon recorded the group as its own.
// When resctrl-mon creates a group it writes <dir>/<group>.<life>.begin; when it removes the
// group it writes <dir>/<group>.<life>.end, with the same <life>. For the example below:
//
//	0f8b2c1e-1111-2222-3333-444455556666.20250530T080000.000000001Z.end
//
// <group> is the group's directory name: usually the pod UID, sometimes ctr-<container id>
// (which may contain dots) or a 64-hex sandbox id. <life> is the life's start in UTC, fixed
// width with nanoseconds and no ':' (Go layout 20060102T150405.000000000Z), so one group's
// names sort by life. Parse a name from the right: the kind after the last '.', then the
// 26-character stamp before the '.' before it; the rest is the group. A .begin without the
// .end of its life is a life still going on (or one whose removal was missed).
//
// Each file is one JSON object of at most 1 MiB, mode 0644, replaced atomically: a reader
// sees the whole old file, the whole new one, or none. The directory is mode 0755 and is
// never reached through a symbolic link. Names starting with '.' are temporaries of a write
// in progress; ignore them.
//
// # Example
//
//	{
//	  "version": 2,
//	  "kind": "end",
//	  "time": "2025-06-01T12:34:56.123456789Z",
//	  "group": "0f8b2c1e-1111-2222-3333-444455556666",
//	  "life": "2025-05-30T08:00:00.000000001Z",
//	  "path": "burstable/mon_groups/0f8b2c1e-1111-2222-3333-444455556666",
//	  "class": "burstable",
//	  "pod": {
//	    "uid": "0f8b2c1e-1111-2222-3333-444455556666",
//	    "namespace": "default",
//	    "name": "web-7d4b9c-x2k8p"
//	  },
//	  "readings": [
//	    {
//	      "domain": "mon_L3_00",
//	      "name": "llc_occupancy",
//	      "value": 1310720,
//	      "kind": "gauge",
//	      "unit": "By"
//	    },
//	    {
//	      "domain": "mon_L3_00",
//	      "name": "mbm_total_bytes",
//	      "value": 48318382080,
//	      "kind": "counter",
//	      "unit": "By"
//	    },
//	    {
//	      "domain": "mon_PERF_PKG_00",
//	      "name": "core_energy",
//	      "value": 1843.25,
//	      "kind": "counter",
//	      "unit": "J"
//	    }
//	  ],
//	  "unavailable": [
//	    "mon_L3_01/mbm_total_bytes"
//	  ]
//	}
//
// # Fields
//
//   - version: 2. Refuse versions you do not know (see Versions for 1). Fields may be added
//     without a new version: ignore the ones you do not know.
//   - kind: "begin" or "end", the same as the file name's suffix.
//   - time: when the counters were read, RFC 3339 in UTC with up to nanosecond precision.
//   - group: the group's directory name, the same as in the file name.
//   - life: when this life of the group began, in the same form as time; the same in the
//     life's .begin and .end, and the stamp in their names. Pair a .begin and an .end by
//     group and life, never by group alone.
//   - path: the group's path below the resctrl root: mon_groups/<group>, or
//     <class>/mon_groups/<group> inside a control group.
//   - class: that control group; absent for the default one.
//   - pod: uid, namespace and name of the Kubernetes pod; absent when there is none.
//     namespace and name may be absent too.
//   - readings: one per counter file of each monitoring domain: domain is the mon_data
//     subdirectory, name the counter file, unit a UCUM unit (By, J, ...) when known.
//     kind "counter" is cumulative: what a life used is its .end value minus its .begin
//     value for the same domain and name. kind "gauge" is a level at that time. Skip
//     readings of a kind you do not know. Always present: [] when there are none.
//   - unavailable: "domain/name" of counters that had no value (the kernel read
//     Unavailable, Error or Unassigned). That is no sample, not zero: do not account a
//     counter that is unavailable at either end. Absent when empty.
//
// # Versions
//
// Version 1 files were named <group>.<kind> and had no life, so a group made again under its
// name overwrote the .begin of its earlier life, and retention could take the new life's
// .begin and the old life's .end for one pair. Version 2 adds life, in the content and the
// name. A reader of version 1 follows the change by parsing names from the right (above) and
// pairing a .begin and an .end by group and life. Files left from before an upgrade keep
// their version 1 names and pair among themselves by group, except for a life that was going
// on at the upgrade: it began with <group>.begin (version 1) and ends with
// <group>.<life>.end (version 2), which has no .begin of its own. Pair such an .end with the
// <group>.begin that has no .end when that .begin's time is not before the .end's life;
// retention keeps and removes the two together. Write writes only version 2; Read accepts
// both (Life is zero for version 1).
//
// # Retention
//
// Prune deletes old snapshots by age and by count, one life at a time: a life's .begin and
// .end go together, the .end first, so a consumer never finds an .end without its .begin. A
// .begin without its .end is kept while its life goes on; once the group is gone without an
// .end (its removal was missed) it is pruned like a finished life. Ages come from the names
// and modification times; Prune opens no snapshot.
package snapshot
