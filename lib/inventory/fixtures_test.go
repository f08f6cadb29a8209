package inventory_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/resctrltree"
)

// openTree opens the inventory on a fixture tree and its registry (resctrltree): no root,
// no simulator.
func openTree(t *testing.T, tree string) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.Open(resctrltree.Config(t, tree), resctrltree.Mount)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// The read side on every fixture tree: each owned pod in its state (the foreign group is
// none of them), the live tasks of its group, its counters, and RMID use counting every
// group, ours or not.
func TestFixturePods(t *testing.T) {
	t.Parallel()
	total := map[string]int{resctrltree.L3: 256, resctrltree.AET: 64, resctrltree.MBMEvent: 256, resctrltree.SNC: 128, resctrltree.Sim: 64}
	for _, tree := range resctrltree.Names {
		t.Run(tree, func(t *testing.T) {
			t.Parallel()
			inv := openTree(t, tree)
			pods, err := inv.Pods(inventory.Options{Tasks: true, Counters: true})
			if err != nil {
				t.Fatal(err)
			}
			states := map[string]inventory.State{}
			for _, p := range pods {
				states[p.PodUID] = p.State
			}
			want := map[string]inventory.State{resctrltree.UIDActive: inventory.Active, resctrltree.UIDIdle: inventory.Idle,
				resctrltree.UIDPending: inventory.Pending, resctrltree.UIDMissing: inventory.Missing}
			if len(pods) != len(want) || !equalStates(states, want) {
				t.Errorf("states %v, want %v", states, want)
			}
			for _, p := range pods {
				switch p.PodUID {
				case resctrltree.UIDActive:
					// pid 1 runs; 999999999 is past any pid_max.
					if p.Tasks != 1 || len(p.Readings) == 0 || p.Path != "mon_groups/"+resctrltree.UIDActive || p.Class != "" ||
						len(p.Containers) != 1 || p.Containers[0].Name != "app" || p.Cgroup != resctrltree.PodCgroupActive {
						t.Errorf("active pod: %+v", p)
					}
				case resctrltree.UIDIdle:
					if p.Tasks != 0 || len(p.Readings) == 0 || p.Class != resctrltree.Class || !strings.HasPrefix(p.Detail, "idle for ") {
						t.Errorf("idle pod: %+v", p)
					}
				default: // no group: nothing read
					if p.Tasks != 0 || p.Readings != nil || p.Missing != nil {
						t.Errorf("pod without a group: %+v", p)
					}
				}
			}
			r, err := inv.RMIDs()
			// The root, the class, two groups of ours and the foreign one.
			if err != nil || r.Used != 5 || r.Total != total[tree] {
				t.Errorf("rmids %+v, %v; want 5 used of %d", r, err, total[tree])
			}
		})
	}
}

func equalStates(a, b map[string]inventory.State) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// Each tree's own counters reach the pod: AET's energy, an SNC node's files only when asked
// for, a sample the kernel did not give said as missing.
func TestFixtureCounters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tree       string
		subdomains bool
		uid        string
		has        func(inventory.Pod) bool
	}{
		{resctrltree.L3, false, resctrltree.UIDActive, func(p inventory.Pod) bool {
			return slices.ContainsFunc(p.Missing, func(m resctrlfs.Missing) bool {
				return m.Domain == "mon_L3_01" && m.Name == resctrlfs.MBMLocal && m.Reason == "Unavailable"
			})
		}},
		{resctrltree.AET, false, resctrltree.UIDActive, func(p inventory.Pod) bool {
			return slices.ContainsFunc(p.Readings, func(r resctrlfs.Reading) bool {
				return r.Domain == "mon_PERF_PKG_00" && r.Name == resctrlfs.CoreEnergy && r.Value == 1042.371582 && r.Cumulative && r.Unit == "J"
			})
		}},
		{resctrltree.MBMEvent, false, resctrltree.UIDActive, func(p inventory.Pod) bool {
			return slices.ContainsFunc(p.Missing, func(m resctrlfs.Missing) bool { return m.Reason == "Unassigned" })
		}},
		{resctrltree.SNC, true, resctrltree.UIDIdle, func(p inventory.Pod) bool {
			return slices.ContainsFunc(p.Readings, func(r resctrlfs.Reading) bool {
				return r.Domain == "mon_L3_01" && r.Sub == "mon_sub_L3_03" && r.Name == resctrlfs.LLCOccupancy && r.Value == 2012
			})
		}},
		{resctrltree.SNC, false, resctrltree.UIDIdle, func(p inventory.Pod) bool {
			return len(p.Readings) == 6 && !slices.ContainsFunc(p.Readings, func(r resctrlfs.Reading) bool { return r.Sub != "" })
		}},
	} {
		pods, err := openTree(t, tc.tree).Pods(inventory.Options{Counters: true, Subdomains: tc.subdomains})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(pods, func(p inventory.Pod) bool { return p.PodUID == tc.uid })
		if i < 0 || !tc.has(pods[i]) {
			t.Errorf("%s (subdomains %v): %+v", tc.tree, tc.subdomains, pods)
		}
	}
}

// Status on a fixture tree: groups by state then path, the counts the front ends made, and
// the counter assignment only where the kernel has it.
func TestFixtureStatus(t *testing.T) {
	t.Parallel()
	st, err := openTree(t, resctrltree.MBMEvent).Status()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, g := range st.Groups {
		order = append(order, string(g.State)+" "+g.PodUID)
	}
	want := []string{"active " + resctrltree.UIDActive, "idle " + resctrltree.UIDIdle, "missing " + resctrltree.UIDMissing, "pending " + resctrltree.UIDPending}
	if !slices.Equal(order, want) {
		t.Errorf("groups %q, want %q", order, want)
	}
	for name, n := range resctrltree.Counts {
		if st.Counts[name] != uint64(n) {
			t.Errorf("count %s: %d, want %d", name, st.Counts[name], n)
		}
	}
	if st.MBM == nil || !st.MBM.Counting() || st.MBM.Available["1"] != 31 {
		t.Errorf("counter assignment: %+v", st.MBM)
	}
	if st, err := openTree(t, resctrltree.L3).Status(); err != nil || st.MBM != nil {
		t.Errorf("counter assignment on a kernel without it: %+v, %v", st.MBM, err)
	}
}

// One pod's status on a fixture tree, by UID or namespace/name: its group read whole.
func TestFixturePodStatus(t *testing.T) {
	t.Parallel()
	inv := openTree(t, resctrltree.L3)
	for _, key := range []string{resctrltree.UIDActive, "shop/cart"} {
		st, err := inv.PodStatus(key, "")
		if err != nil || st.Pod.PodUID != resctrltree.UIDActive || st.Pod.Tasks != 1 || len(st.Pod.Readings) != 5 || len(st.Pod.Missing) != 1 {
			t.Errorf("%s: %+v, %v", key, st, err)
		}
	}
	if _, err := inv.PodStatus("shop/nothing", ""); !errors.Is(err, inventory.ErrNoSuchPod) {
		t.Errorf("a pod with no group: %v", err)
	}
}

// The inventory opens resctrl only where its opener's mount check agrees.
func TestOpenMount(t *testing.T) {
	t.Parallel()
	cfg := resctrltree.Config(t, resctrltree.L3)
	refused := errors.New("refused")
	if _, err := inventory.Open(cfg, func(string) error { return refused }); !errors.Is(err, refused) {
		t.Errorf("opened where the mount check refused: %v", err)
	}
	if _, err := inventory.Open(cfg, nil); !errors.Is(err, resctrlfs.ErrNotResctrl) {
		t.Errorf("nil mount check (resctrlfs.Check) took a plain directory: %v", err)
	}
}
