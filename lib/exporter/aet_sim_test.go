package exporter_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// On an AET node whose event groups boot left partly or wholly off (intel_aet.c
// enable_events: too few RMIDs, not forced), the exporter exports what is there and nothing
// else: the enabled group's events (the perf group's as resctrl_mon_counter), no series and
// no read error for the events that are gone, no PERF_PKG at all when no group is on; and
// resctrl_mon_num_rmids is the smaller of L3's and PERF_PKG's, where placing stops: the
// next pod is pending. Swept over the groups' states.
func TestCollectAETGroupsOff(t *testing.T) {
	t.Parallel()
	const l3 = 6
	for _, tc := range []struct {
		name         string
		groups       []resctrlsim.AETGroup
		energy, perf bool // which events are exported
		limit        int  // resctrl_mon_num_rmids
	}{
		{name: "energy off", groups: []resctrlsim.AETGroup{{Name: "energy", RMIDs: 64}, {Name: "perf"}}, perf: true, limit: l3},
		{name: "perf off", groups: []resctrlsim.AETGroup{{Name: "energy"}, {Name: "perf", RMIDs: 64}}, energy: true, limit: l3},
		{name: "both off", groups: []resctrlsim.AETGroup{{Name: "energy", RMIDs: 64}, {Name: "perf", RMIDs: 64}}, limit: l3},
		{name: "energy forced", groups: []resctrlsim.AETGroup{{Name: "energy", RMIDs: 3, Force: true}}, energy: true, limit: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvOn(t, &cgroup.Host{}, resctrlsim.Options{NumRMIDs: l3, PerfPkgDomains: 1, AETGroups: tc.groups})
			// The root holds one RMID; limit-1 pods get one each, the next is pending.
			var uids []string
			for i := range tc.limit - 1 {
				uid := fmt.Sprintf("6a1f3c2e-0000-4000-8000-%012d", i)
				uids = append(uids, uid)
				e.place(t, uid, fmt.Sprint("c", i), proctest.Start(t, proctest.Spin))
			}
			over := fmt.Sprintf("6a1f3c2e-0000-4000-8000-%012d", 999)
			a := map[string]string{identity.CRIOPodUID: over, identity.CRIOSandboxID: strings.Repeat("9", 64),
				identity.CRIOContainerType: "container", identity.CRIOPodNamespace: "shop", identity.CRIOPodName: "over"}
			idn, err := identity.FromAnnotations("over", a)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.m.Place(lifecycle.Placement{ContainerID: "over", Pid: proctest.Start(t, proctest.Sleep), Pod: idn, Annotations: a}); !errors.Is(err, resctrlfs.ErrNoRMID) {
				t.Fatalf("placing past num_rmids %d: %v, want ErrNoRMID", tc.limit, err)
			}
			fams := e.waitFor(t, "the pods' bandwidth", func(f map[string]*dto.MetricFamily) bool {
				return len(find(f["resctrl_mon_mbm_total_bytes_total"], group(uids[0]))) == 1
			})
			if n := one(t, fams, "resctrl_mon_num_rmids"); n != float64(tc.limit) {
				t.Errorf("num_rmids %v, want %d", n, tc.limit)
			}
			if n := one(t, fams, "resctrl_mon_groups", "state=pending"); n != 1 {
				t.Errorf("pending groups %v, want 1", n)
			}
			for _, uid := range uids {
				energy := find(fams["resctrl_mon_core_energy_joules_total"], group(uid), "resource=PERF_PKG")
				perf := find(fams["resctrl_mon_counter"], group(uid), "resource=PERF_PKG", "counter=uops_retired")
				if (len(energy) == 1) != tc.energy || (len(perf) == 1) != tc.perf {
					t.Errorf("%s: %d core_energy and %d uops_retired series, want energy %v, perf %v", uid, len(energy), len(perf), tc.energy, tc.perf)
				}
				if !tc.energy && !tc.perf && len(find(fams["resctrl_mon_counter"], group(uid), "resource=PERF_PKG")) != 0 {
					t.Errorf("%s: PERF_PKG series with no AET group enabled", uid)
				}
			}
			if errs := find(fams["resctrl_mon_mon_data_read_errors_total"]); len(errs) == 0 {
				t.Error("no read error series")
			} else if n := sum(errs); n != 0 {
				t.Errorf("%v read errors: an event that is gone is no error", n)
			}
		})
	}
}
