package resctrlsim

import (
	"fmt"
	"time"
)

// Options configure a simulated resctrl mount. The zero value is completed by withDefaults.
type Options struct {
	// NumRMIDs is info/L3_MON/num_rmids. RMID 0 belongs to the root group, so NumRMIDs-1
	// groups (control and monitoring together) can exist besides it. With SNCWays it is the
	// hardware's RMIDs, which the kernel divides among the SNC nodes (see SNCWays).
	NumRMIDs int
	// NumCLOSIDs is info/L3/num_closids; CLOSID 0 belongs to the root group.
	NumCLOSIDs int
	// IOAlloc is AMD's io_alloc (Linux ≥ 6.19): info/L3/io_alloc, "disabled" at mount;
	// enabled, it reserves the highest CLOSID (ioalloc.go).
	IOAlloc bool
	// L3Domains is the number of mon_data/mon_L3_NN directories (cache domains, sockets).
	L3Domains int
	// SNCWays is Intel's Sub-NUMA Cluster mode (Linux ≥ 6.11): the SNC nodes that share each
	// L3 cache (the kernel's snc_nodes_per_l3_cache; 2, 3, 4 or 6). 0 or 1: no SNC. With it,
	// monitoring is per SNC node (RESCTRL_L3_NODE): each mon_data/mon_L3_XX (XX the cache id)
	// keeps the files summed over its nodes and holds a mon_sub_L3_YY directory per node (YY
	// the node id, cache XX holding nodes XX*SNCWays and up), and info/L3_MON/num_rmids is
	// NumRMIDs divided by SNCWays: the hardware's RMIDs are split among the nodes
	// (arch/x86/kernel/cpu/resctrl/monitor.c, rdt_get_mon_l3_config). See snc.go.
	SNCWays int
	// PerfPkgDomains is the number of mon_data/mon_PERF_PKG_NN directories (Intel AET).
	// Zero means no AET: no PERF_PKG domains and no info/PERF_PKG_MON.
	PerfPkgDomains int
	// PerfPkgRMIDs is info/PERF_PKG_MON/num_rmids; zero means NumRMIDs. With AET the
	// number of groups is bounded by the smaller of the two, as the kernel does. With
	// AETGroups it is theirs, and must be zero here.
	PerfPkgRMIDs int
	// AETGroups, with PerfPkgDomains, are AET's event groups as the kernel found them at
	// boot (aet.go): which are enabled, which events their domains show, and PERF_PKG's
	// num_rmids. Nil: the "energy" group alone, enabled, tracking PerfPkgRMIDs.
	AETGroups []AETGroup
	// Limbo is the kernel's RMID limbo, on whenever llc_occupancy is monitored (limbo.go):
	// a freed RMID is dirty until the limbo worker reads its occupancy below
	// info/L3_MON/max_threshold_occupancy; while only dirty RMIDs are free, mkdir fails with
	// EBUSY. Off (the default), a freed RMID is free at once.
	Limbo bool
	// LimboTime turns Limbo on and keeps every freed RMID dirty for at least that long,
	// whatever its occupancy, as if a neighbour's traffic kept its lines counted: what a
	// test wants that needs EBUSY for a while (an hour: for the whole test). A group's own
	// llc_occupancy does not show it, so code that reads occupancy before an rmdir cannot
	// foresee it; use Limbo and SetOccupancy for that.
	LimboTime time.Duration
	// LimboInterval is how often the limbo worker runs; zero means the kernel's 1s
	// (CQM_LIMBOCHECK_INTERVAL). Sim.LimboPass runs one pass at once.
	LimboInterval time.Duration
	// TaskLists accepts comma-separated ids in one tasks write, as Linux ≥ 6.2 does. The
	// default (false) is the older kernels' rule: one id per write(2).
	TaskLists bool
	// Debug adds mon_hw_id and ctrl_hw_id files to every group, as `mount -o debug`
	// does on Linux ≥ 6.6, so tests can see which RMID and CLOSID a group holds.
	Debug bool
	// MBMAssign selects the bandwidth counter assignment interface of Linux ≥ 6.18
	// (info/L3_MON/mbm_assign_mode): MBMAssignAbsent (the zero value: an older kernel, no such
	// file), MBMAssignDefaultOnly (a 6.18 kernel on hardware without assignable counters),
	// MBMAssignEvent or MBMAssignDefault (AMD ABMC, mounted in that mode). See assign.go.
	MBMAssign MBMAssign
	// MBMCounters is info/L3_MON/num_mbm_cntrs, the assignable counters of each L3 domain,
	// when MBMAssign is MBMAssignEvent or MBMAssignDefault. Zero means 32, as on AMD Zen 5.
	MBMCounters int
	// MPAMFixed is Arm MPAM's fixed counter assignment: mbm_event mode that cannot be switched
	// (mbm_assign_mode lists only "[mbm_event]" and refuses "default"). It implies MBMAssign
	// MBMAssignEvent and is refused with any other. See mpam.go.
	MPAMFixed bool
	// SettleInterval is how often the CPU time of every task is charged to its group even
	// when nobody reads a counter, so a task that exits between reads is not lost. Zero
	// means the default (250ms); negative disables the ticker.
	SettleInterval time.Duration
	// Rates turn CPU time into counter values.
	Rates Rates
	// Logf receives the simulator's diagnostics (lost proc events, ambiguous thread
	// creations). Nil discards them.
	Logf func(format string, args ...any)

	// now is the clock; tests of pure logic replace it.
	now func() time.Time
	// aet is what the kernel made of AETGroups (the energy group alone without them);
	// aetAllOff: AETGroups were given and none is enabled.
	aet       aet
	aetAllOff bool
}

// Rates turn one second of CPU time into counter increments. They are arbitrary but fixed,
// so tests can compare groups; they do not model a real cache.
type Rates struct {
	MBMTotalBytesPerCPUSecond float64 // mbm_total_bytes per CPU second
	MBMLocalFraction          float64 // mbm_local_bytes as a fraction of mbm_total_bytes
	LLCBytesPerCPUSecond      float64 // llc_occupancy gained per CPU second, before decay
	LLCSizeBytes              uint64  // llc_occupancy never exceeds this per domain
	LLCDecay                  time.Duration
	JoulesPerCPUSecond        float64 // core_energy per CPU second (a 15 W core)
	ActivityPerCPUSecond      float64 // activity per CPU second
}

// MaxThresholdOccupancy is what info/L3_MON/max_threshold_occupancy shows at mount, until
// written.
const MaxThresholdOccupancy = 1 << 20

func (o Options) withDefaults() Options {
	if o.NumRMIDs == 0 {
		o.NumRMIDs = 64
	}
	if o.NumCLOSIDs == 0 {
		o.NumCLOSIDs = 16
	}
	if o.L3Domains == 0 {
		o.L3Domains = 1
	}
	switch {
	case o.PerfPkgDomains > 0 && o.AETGroups != nil && o.PerfPkgRMIDs == 0:
		o.aet = resolveAET(o.AETGroups)
		o.PerfPkgRMIDs = o.aet.rmids
		if len(o.aet.events) == 0 {
			// No group enabled: no PERF_PKG resource at all.
			o.PerfPkgDomains, o.aetAllOff = 0, true
		}
	case o.PerfPkgDomains > 0 && o.PerfPkgRMIDs == 0:
		o.PerfPkgRMIDs = o.NumRMIDs
	}
	if o.aet.events == nil && o.PerfPkgDomains > 0 {
		o.aet.events = aetGroups["energy"]
	}
	if o.MPAMFixed && o.MBMAssign == MBMAssignAbsent {
		o.MBMAssign = MBMAssignEvent
	}
	if o.MBMAssign.assignable() && o.MBMCounters == 0 {
		o.MBMCounters = 32
	}
	if o.LimboInterval == 0 {
		o.LimboInterval = defaultLimboInterval
	}
	if o.SettleInterval == 0 {
		o.SettleInterval = 250 * time.Millisecond
	}
	r := &o.Rates
	if r.MBMTotalBytesPerCPUSecond == 0 {
		r.MBMTotalBytesPerCPUSecond = 2e9
	}
	if r.MBMLocalFraction == 0 {
		r.MBMLocalFraction = 0.75
	}
	if r.LLCBytesPerCPUSecond == 0 {
		r.LLCBytesPerCPUSecond = 64 << 20
	}
	if r.LLCSizeBytes == 0 {
		r.LLCSizeBytes = 32 << 20
	}
	if r.LLCDecay == 0 {
		r.LLCDecay = 2 * time.Second
	}
	if r.JoulesPerCPUSecond == 0 {
		r.JoulesPerCPUSecond = 15
	}
	if r.ActivityPerCPUSecond == 0 {
		r.ActivityPerCPUSecond = 1
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.NumRMIDs < 1:
		return fmt.Errorf("num_rmids %d: must be at least 1 (RMID 0 is the root group's)", o.NumRMIDs)
	case o.NumCLOSIDs < 1:
		return fmt.Errorf("num_closids %d: must be at least 1 (CLOSID 0 is the root group's)", o.NumCLOSIDs)
	case o.L3Domains < 1 || o.L3Domains > 100:
		return fmt.Errorf("l3 domains %d: must be 1..100", o.L3Domains)
	case o.SNCWays < 0 || o.SNCWays == 5 || o.SNCWays > 6:
		return fmt.Errorf("snc ways %d: must be 0, 1, 2, 3, 4 or 6 (snc_get_config ignores other counts)", o.SNCWays)
	case o.NumRMIDs/o.sncWays() < 1:
		return fmt.Errorf("num_rmids %d: fewer than the %d SNC ways (each node needs one for the root group)", o.NumRMIDs, o.SNCWays)
	case o.SNCWays > 1 && o.MBMAssign.assignable():
		return fmt.Errorf("snc ways %d: not with mbm assign %q (SNC is Intel's, assignable counters AMD's)", o.SNCWays, o.MBMAssign)
	case o.PerfPkgDomains < 0 || o.PerfPkgDomains > 100:
		return fmt.Errorf("perf_pkg domains %d: must be 0..100", o.PerfPkgDomains)
	case o.PerfPkgRMIDs < 0:
		return fmt.Errorf("perf_pkg num_rmids %d: must not be negative", o.PerfPkgRMIDs)
	case o.AETGroups != nil && o.PerfPkgDomains == 0 && !o.aetAllOff:
		return fmt.Errorf("aet groups: only with perf_pkg domains")
	case o.AETGroups != nil && o.PerfPkgRMIDs != o.aet.rmids:
		return fmt.Errorf("perf_pkg num_rmids %d: not with aet groups, which give it", o.PerfPkgRMIDs)
	case !o.MBMAssign.valid():
		return fmt.Errorf("mbm assign %q: must be one of %q", o.MBMAssign, mbmAssignChoices)
	case o.MBMCounters < 0 || o.MBMCounters > 1<<16:
		return fmt.Errorf("mbm counters %d: must be 0..65536", o.MBMCounters)
	case o.MBMCounters > 0 && !o.MBMAssign.assignable():
		return fmt.Errorf("mbm counters %d: only with mbm assign %q or %q", o.MBMCounters, MBMAssignEvent, MBMAssignDefault)
	case o.MPAMFixed && o.MBMAssign != MBMAssignEvent:
		return fmt.Errorf("mpam fixed: only with mbm assign %q (MPAM's mode is fixed at mbm_event), not %q", MBMAssignEvent, o.MBMAssign)
	case validateAET(o.AETGroups) != nil:
		return validateAET(o.AETGroups)
	case o.LimboTime < 0:
		return fmt.Errorf("limbo time %s: must not be negative", o.LimboTime)
	case o.LimboInterval < 0:
		return fmt.Errorf("limbo interval %s: must not be negative", o.LimboInterval)
	}
	return nil
}

// groupRMIDs is how many RMIDs groups can actually use: with AET both resources must have one.
func (o Options) groupRMIDs() int {
	if l3 := o.l3RMIDs(); o.PerfPkgDomains == 0 || l3 <= o.PerfPkgRMIDs {
		return l3
	}
	return o.PerfPkgRMIDs
}

// l3RMIDs is info/L3_MON/num_rmids: with SNC the hardware's RMIDs divided among the nodes
// of a cache, "(boot_cpu_data.x86_cache_max_rmid + 1) / snc_nodes_per_l3_cache".
func (o Options) l3RMIDs() int { return o.NumRMIDs / o.sncWays() }

// sncWays is SNCWays with "off" as 1: the nodes per L3 cache.
func (o Options) sncWays() int { return max(o.SNCWays, 1) }

// l3MonDomains is the number of L3 monitoring domains: a node each with SNC, a cache each
// without.
func (o Options) l3MonDomains() int { return o.L3Domains * o.sncWays() }
