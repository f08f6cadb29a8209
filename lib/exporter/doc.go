// Package exporter is resctrl-mon's Prometheus collector: every owned group's resctrl
// counters and its pod's pressure (PSI), read from the inventory when Prometheus scrapes
// (no background timers), with the exporter's own health. `resctrl-mon serve` serves it;
// any front end (the NRI adapter) can register the same Collector on its own registry.
//
// Per owned group and monitoring domain, labelled pod_uid, namespace, pod, group (the
// group's path below the resctrl root), class (its allocation class, "" for none),
// resource ("L3", "PERF_PKG") and domain (the kernel's domain id, the number in
// mon_L3_NN, never a position in a listing):
//
//	resctrl_mon_llc_occupancy_bytes          gauge    llc_occupancy
//	resctrl_mon_mbm_total_bytes_total        counter  mbm_total_bytes
//	resctrl_mon_mbm_local_bytes_total        counter  mbm_local_bytes
//	resctrl_mon_core_energy_joules_total     counter  core_energy (Intel AET)
//	resctrl_mon_activity_farads_total        counter  activity (Intel AET; the kernel's nF × 1e-9)
//	resctrl_mon_counter{counter}             gauge    any other mon_data file, as the kernel prints it
//
// On a Sub-NUMA Cluster node (Linux ≥ 6.11) the kernel's mon_L3_NN files sum the cache's SNC
// nodes and each node has its own in mon_L3_NN/mon_sub_L3_YY/: those are exported too, with
// one more label, subdomain (the node's id, YY as a plain number), in families of their own so
// that a sum over a family still counts each byte once:
//
//	resctrl_mon_snc_llc_occupancy_bytes{subdomain}      gauge
//	resctrl_mon_snc_mbm_total_bytes_total{subdomain}    counter
//	resctrl_mon_snc_mbm_local_bytes_total{subdomain}    counter
//
// Per pod: resctrl_mon_pod_info{pod_uid,namespace,pod,group,class,state} 1 (state is one of
// inventory.States), so queries can
// join on group and leave out late-assigned pods (whose counters are a lower bound); and
// pressure through lib/psimetrics, labelled pod_uid, namespace, pod, container and
// container_id: the pod's cgroup with both "" (as cAdvisor labels a pod's own cgroup), each
// container's with its recorded name (its id where none was recorded) and its runtime's id.
//
// # Counters never step backwards
//
// A cumulative counter is exported as what this exporter has seen it grow: zero when it
// first reads the series, then the sum of every increase between two readings. A reading
// lower than the one before (a group re-made behind resctrl-mon's back, a hardware wrap, a
// glitch of the kernel's cross-CPU sum) is absorbed: it becomes the new baseline, the
// exported value stays where it was, and resctrl_mon_mon_data_resets_total{cause="decrease"}
// counts it. A new life of the group (re-made on a new RMID by reconcile or a hook; the
// inventory's Created changes) rebases every series of the group the same way, whatever
// the new reading (a reused RMID can carry another workload's residual counts), counted
// with cause="new_life". So rate() never goes negative and never shows a false spike.
// Starting from zero rather than from the kernel's value means that an exporter restart is
// an ordinary counter reset, which rate() handles, instead of a drop from an absorbed total
// back to the kernel's value, which rate() would read as a spike of the group's whole past.
// The cost: the absolute value is "since the exporter first read it", so use rate() or
// increase(), never the raw number.
//
// The last readings live in the Collector (no globals), one entry per series of a group in
// the registry; a group's entries go when its record goes.
//
// # No sample is never a zero
//
// A counter file that reads Unavailable, Error or Unassigned, or cannot be read or parsed,
// leaves its series out of that scrape and, but for Unassigned, counts
// resctrl_mon_mon_data_read_errors_total{reason}; the scrape itself never fails. Unassigned
// (Linux ≥ 6.18 mbm_event mode: no hardware counter) is a state: resctrl_mon_mbm_assigned
// says it, and the counter's next number, from a counter that starts at zero, is added whole
// (resctrl_mon_mon_data_resets_total{cause="assignment"}). A pressure
// file likewise (resctrl_mon_pressure_read_errors_total{resource,reason}). A host without
// PSI is logged once, resctrl_mon_pressure_available is 0, and the rest is exported.
//
// # Health
//
//	resctrl_mon_scrape_duration_seconds          gauge    how long this collection took
//	resctrl_mon_inventory_up                     gauge    1 if the registry could be read (else no
//	                                                      groups or pods are exported, never zeros)
//	resctrl_mon_groups{state}                    gauge    owned groups by state
//	resctrl_mon_rmids_used, resctrl_mon_num_rmids gauge every group's RMID (ours or not), num_rmids
//	resctrl_mon_failures_total{reason}           counter  failures the hooks, reconcile and the
//	                                                      adapter recorded, from the state dir's
//	                                                      counts/; "identity" is a refusal
//	resctrl_mon_outcomes_total{source,action}    counter  what the hook, the adapter and reconcile
//	                                                      did, from the state dir's counts/
//	resctrl_mon_snapshots_written_total{kind}    counter  snapshots written, from the same
//	resctrl_mon_snapshots{kind}                  gauge    .begin and .end snapshot files present
//	resctrl_mon_pressure_available               gauge    1 if the kernel keeps PSI
//	resctrl_mon_source_errors_total{source}      counter  reads of the registry, RMIDs, counts,
//	                                                      snapshots or cgroup2 mounts that failed
package exporter
