// Package snapshot records a monitoring group's counters at both ends of its life, so a
// passive consumer (energy accounting, billing) can account for a whole pod after its
// resctrl group is gone.
//
// # Files
//
// When resctrl-mon creates a group it writes <dir>/<group>.begin; when it removes the group
// it writes <dir>/<group>.end. <group> is the group's directory name: usually the pod UID,
// sometimes ctr-<container id> or a sandbox id. A .begin without an .end is a group still
// alive (or one whose removal was missed).
//
// Each file is one JSON object of at most 1 MiB, mode 0644, replaced atomically: a reader
// sees the whole old file, the whole new one, or none. Names starting with '.' are
// temporaries of a write in progress; ignore them.
//
// # Example
//
//	{
//	  "version": 1,
//	  "kind": "end",
//	  "time": "2025-06-01T12:34:56.123456789Z",
//	  "group": "0f8b2c1e-1111-2222-3333-444455556666",
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
//   - version: 1. Refuse other versions. Fields may be added without a new version:
//     ignore the ones you do not know.
//   - kind: "begin" or "end", the same as the file name's suffix.
//   - time: when the counters were read, RFC 3339 in UTC with up to nanosecond precision.
//   - group: the group's directory name, the same as the file name's stem.
//   - path: the group's path below the resctrl root: mon_groups/<group>, or
//     <class>/mon_groups/<group> inside a control group.
//   - class: that control group; absent for the default one.
//   - pod: uid, namespace and name of the Kubernetes pod; absent when there is none.
//     namespace and name may be absent too.
//   - readings: one per counter file of each monitoring domain: domain is the mon_data
//     subdirectory, name the counter file, unit a UCUM unit (By, J, ...) when known.
//     kind "counter" is cumulative: what a group used is its .end value minus its .begin
//     value for the same domain and name. kind "gauge" is a level at that time. Skip
//     readings of a kind you do not know. Always present: [] when there are none.
//   - unavailable: "domain/name" of counters that had no value (the kernel read
//     Unavailable, Error or Unassigned). That is no sample, not zero: do not account a
//     counter that is unavailable at either end. Absent when empty.
//
// # Retention
//
// Prune deletes old snapshots by age and by count. A group's .begin and .end go together,
// the .end first, so a consumer never finds an .end without its .begin; a .begin without its
// .end (a live group) is never pruned.
package snapshot
