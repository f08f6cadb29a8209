package resctrlsim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// With Sub-NUMA Cluster mode (rdtgroup.c mkdir_mondata_subdir), each mon_L3_XX, XX the
// cache id, keeps the summed files and holds a mon_sub_L3_YY per SNC node, in every group;
// info/L3_MON/num_rmids is the hardware's divided by the nodes per cache (monitor.c
// rdt_get_mon_l3_config), and groups run out there; allocation domains stay the caches'.
// Swept over the node counts snc_get_config accepts and one or two caches.
func TestSNCLayout(t *testing.T) {
	t.Parallel()
	for _, ways := range []int{2, 3, 4, 6} {
		for _, caches := range []int{1, 2} {
			t.Run(fmt.Sprintf("snc=%d,caches=%d", ways, caches), func(t *testing.T) {
				t.Parallel()
				const hwRMIDs = 48
				sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: hwRMIDs, L3Domains: caches, SNCWays: ways})
				d := sim.Dir
				limit := hwRMIDs / ways
				if got := strings.TrimSpace(read(t, filepath.Join(d, "info/L3_MON/num_rmids"))); got != strconv.Itoa(limit) {
					t.Errorf("num_rmids %s, want %d / %d = %d", got, hwRMIDs, ways, limit)
				}
				mustMkdir(t, filepath.Join(d, "c1"))
				mustMkdir(t, filepath.Join(d, "c1/mon_groups/m"))
				for _, g := range []string{"", "c1", "c1/mon_groups/m"} {
					var wantDomains []string
					for c := range caches {
						wantDomains = append(wantDomains, fmt.Sprintf("mon_L3_%02d", c))
					}
					if got := names(t, filepath.Join(d, g, "mon_data")); !slices.Equal(got, wantDomains) {
						t.Fatalf("%q: mon_data holds %q, want %q", g, got, wantDomains)
					}
					for c := range caches {
						dom := filepath.Join(d, g, "mon_data", fmt.Sprintf("mon_L3_%02d", c))
						want := []string{"llc_occupancy", "mbm_local_bytes", "mbm_total_bytes"}
						for n := range ways {
							want = append(want, fmt.Sprintf("mon_sub_L3_%02d", c*ways+n))
						}
						slices.Sort(want)
						if got := names(t, dom); !slices.Equal(got, want) {
							t.Errorf("%q: %s holds %q, want %q", g, filepath.Base(dom), got, want)
						}
						sub := filepath.Join(dom, fmt.Sprintf("mon_sub_L3_%02d", c*ways+ways-1))
						if got := names(t, sub); !slices.Equal(got, []string{"llc_occupancy", "mbm_local_bytes", "mbm_total_bytes"}) {
							t.Errorf("%q: %s holds %q", g, sub, got)
						}
						for _, f := range []string{"mbm_total_bytes", filepath.Join(filepath.Base(sub), "mbm_total_bytes")} {
							if _, err := strconv.ParseUint(strings.TrimSpace(read(t, filepath.Join(dom, f))), 10, 64); err != nil {
								t.Errorf("%q: %s: %v", g, f, err)
							}
						}
					}
				}
				// Allocation is still per cache: one schemata domain per L3 cache.
				if got := strings.Count(read(t, filepath.Join(d, "c1/schemata")), "="); got != caches {
					t.Errorf("schemata has %d domains, want %d (one per cache)", got, caches)
				}
				// The root, c1 and m hold three RMIDs; the rest run out at num_rmids.
				for i := 3; i < limit; i++ {
					mustMkdir(t, filepath.Join(d, "mon_groups", fmt.Sprint("g", i)))
				}
				wantErrno(t, "mkdir past num_rmids / snc", os.Mkdir(filepath.Join(d, "mon_groups/over"), 0o755), syscall.ENOSPC)
			})
		}
	}
}

// Options the kernel never produces are refused with a clear error.
func TestSNCOptionsRefused(t *testing.T) {
	t.Parallel()
	for _, o := range []resctrlsim.Options{
		{SNCWays: 5},
		{SNCWays: 7},
		{SNCWays: -1},
		{SNCWays: 4, NumRMIDs: 3},
		{SNCWays: 2, MBMAssign: resctrlsim.MBMAssignEvent},
	} {
		_, err := resctrlsim.Mount(t.TempDir(), o)
		if err == nil || !strings.Contains(err.Error(), "resctrlsim options") {
			t.Errorf("%+v: %v, want the options refused", o, err)
		}
	}
}

// A task's counts land on the SNC node of the CPU it runs on, and the cache's files sum the
// nodes (monitor.c __l3_mon_event_count_sum): swept over the node the task is bound to.
func TestSNCSumsNodes(t *testing.T) {
	t.Parallel()
	if n := runtime.NumCPU(); n < 2 {
		t.Skipf("%d CPU online: no second node to bind to", n)
	}
	for _, cpu := range []int{0, 1} {
		t.Run(fmt.Sprint("cpu", cpu), func(t *testing.T) {
			t.Parallel()
			// Two nodes on one cache: CPU c runs on node c.
			sim := resctrlsim.MountT(t, resctrlsim.Options{L3Domains: 1, SNCWays: 2})
			d := sim.Dir
			mustMkdir(t, filepath.Join(d, "mon_groups/p"))
			busy := start(t, "taskset", "-c", strconv.Itoa(cpu), "sh", "-c", "while :; do :; done")
			// Moved only once bound: time it ran unbound, on the other CPU, must not land in the group.
			eventually(t, "taskset to bind the task", func() bool { return boundTo(busy.Process.Pid, cpu) })
			for _, tid := range threads(t, busy.Process.Pid) {
				if err := write(filepath.Join(d, "mon_groups/p/tasks"), strconv.Itoa(tid)); err != nil {
					t.Fatal(err)
				}
			}
			dom := filepath.Join(d, "mon_groups/p/mon_data/mon_L3_00")
			node := func(n int, f string) uint64 {
				return number(t, filepath.Join(dom, fmt.Sprintf("mon_sub_L3_%02d", n), f))
			}
			eventually(t, "the bound node to count", func() bool { return node(cpu, "mbm_total_bytes") > 0 })
			// Stopped, the group's counts hold still and can be compared.
			if err := busy.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the stopped task's counts to settle", func() bool {
				a := node(cpu, "mbm_total_bytes")
				return a == node(cpu, "mbm_total_bytes")
			})
			for _, f := range []string{"mbm_total_bytes", "mbm_local_bytes"} {
				if other := node(1-cpu, f); other != 0 {
					t.Errorf("%s of node %d, where the task never ran: %d", f, 1-cpu, other)
				}
				sum, own := number(t, filepath.Join(dom, f)), node(cpu, f)
				if own == 0 || sum != own+node(1-cpu, f) {
					t.Errorf("%s: mon_L3_00 reads %d, the nodes %d and %d", f, sum, own, node(1-cpu, f))
				}
			}
			if occ := node(1-cpu, "llc_occupancy"); occ != 0 {
				t.Errorf("llc_occupancy of node %d, where the task never ran: %d", 1-cpu, occ)
			}
		})
	}
}

func number(t *testing.T, path string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimSpace(read(t, path)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// boundTo reports whether pid may run on cpu only (taskset has set its affinity).
func boundTo(pid, cpu int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v) == strconv.Itoa(cpu)
		}
	}
	return false
}
