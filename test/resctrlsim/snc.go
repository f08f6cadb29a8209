package resctrlsim

import (
	"strconv"
	"syscall"
)

// Sub-NUMA Cluster mode (Options.SNCWays), as Linux ≥ 6.11 has it on Intel:
//
//   - Monitoring is per SNC node, not per cache (mon_scope RESCTRL_L3_NODE, set by
//     arch/x86/kernel/cpu/resctrl/monitor.c snc_get_config() when 2, 3, 4 or 6 nodes
//     share an L3 cache).
//   - fs/resctrl/rdtgroup.c mkdir_mondata_subdir() names the directory of each cache
//     mon_L3_<cache id> and fills it with files whose reads sum every node of the cache
//     (mon_add_all_files(..., do_sum=true)), then makes mon_sub_L3_<node id> in it with
//     the node's own files. Each L3 mon domain's id is its node's.
//   - fs/resctrl/monitor.c __l3_mon_event_count_sum() reads each node sharing the cache
//     and adds those whose read succeeds: the sum of the integers each node reports.
//   - rdt_get_mon_l3_config() sets num_rmids to "(x86_cache_max_rmid + 1) /
//     snc_nodes_per_l3_cache": the RMIDs are divided among the nodes, so a node-split
//     machine holds fewer groups.
//   - Summing with assignable counters "is not supported": SNC and ABMC never meet, and
//     Options refuses them together.
//   - Allocation (schemata) stays per cache: info/L3 and the schemata's domain ids are the
//     caches'.

// sncNodes are the SNC node ids (L3 monitoring domain ids) sharing cache: the simulator
// numbers them cache*SNCWays and up, as a BIOS numbers NUMA nodes socket by socket.
func sncNodes(cache int, o Options) []int {
	w := o.sncWays()
	nodes := make([]int, w)
	for i := range nodes {
		nodes[i] = cache*w + i
	}
	return nodes
}

// readSummed renders a counter file of mon_L3_<cache> with SNC: the sum of what each node
// of the cache reports.
func (m *model) readSummed(g *group, cache int, name string) (string, syscall.Errno) {
	if g.dead {
		return "", syscall.ENOENT
	}
	if errno := m.faults.take(OpCounterRead); errno != 0 {
		return "", m.injected(OpCounterRead, errno)
	}
	if v, ok := m.faults.counterValue(name, g.Path()); ok {
		return v + "\n", 0
	}
	m.settleGroup(g)
	var sum uint64
	for _, node := range sncNodes(cache, m.opts) {
		l := &g.counters.l3[node]
		switch name {
		case "llc_occupancy":
			sum += m.occupancy(l)
		case "mbm_total_bytes":
			sum += uint64(mbmRaw(g, node, evTotal))
		case "mbm_local_bytes":
			sum += uint64(mbmRaw(g, node, evLocal))
		default:
			return "", syscall.ENOENT
		}
	}
	return strconv.FormatUint(sum, 10) + "\n", 0
}
