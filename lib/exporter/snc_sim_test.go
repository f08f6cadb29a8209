package exporter_test

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// On a Sub-NUMA Cluster node (two nodes on one cache) each L3 counter is exported for the
// cache as before (the kernel's sum, the same family and labels) and for each node in a
// resctrl_mon_snc_ family with subdomain="0", "1", so a sum over a family counts each byte
// once. A pod bound to a CPU counts on that node only, and its cache's series is the sum of
// its nodes': compared while it is stopped, so every file is read at the same counts. Swept
// over the node the pod runs on.
func TestCollectSNCSubdomains(t *testing.T) {
	t.Parallel()
	if n := runtime.NumCPU(); n < 2 {
		t.Skipf("%d CPU: no second node", n)
	}
	for _, cpu := range []int{0, 1} {
		t.Run("cpu"+strconv.Itoa(cpu), func(t *testing.T) {
			t.Parallel()
			e := newEnvOn(t, &cgroup.Host{}, resctrlsim.Options{L3Domains: 1, SNCWays: 2})
			pid := proctest.Start(t, "exec taskset -c "+strconv.Itoa(cpu)+" sh -c '"+proctest.Spin+"'")
			// Placed only once bound: time it ran unbound, on the other CPU, must not land in
			// the group.
			if err := poll.Until(20*time.Second, func() error { return boundTo(pid, cpu) }); err != nil {
				t.Fatal(err)
			}
			e.place(t, uidBusy, "busy", pid)
			node, other := strconv.Itoa(cpu), strconv.Itoa(1-cpu)
			const total = "resctrl_mon_mbm_total_bytes_total"
			// Stopped, then scraped: the baseline of every series is read at the same counts.
			stop(t, pid)
			e.gather(t)
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			e.waitFor(t, "the node's bandwidth to grow", func(f map[string]*dto.MetricFamily) bool {
				return sum(find(f["resctrl_mon_snc_mbm_total_bytes_total"], group(uidBusy), "subdomain="+node)) > 0
			})
			stop(t, pid)
			fams := e.gather(t)
			for _, name := range []string{total, "resctrl_mon_mbm_local_bytes_total", "resctrl_mon_llc_occupancy_bytes"} {
				nodeName := "resctrl_mon_snc_" + strings.TrimPrefix(name, "resctrl_mon_")
				if ms := find(fams[name], group(uidBusy), "resource=L3", "domain=0"); len(ms) != 1 || labelNames(ms[0]) != "class,domain,group,namespace,pod,pod_uid,resource" {
					t.Fatalf("%s: %d series of the cache (want one, labelled as without SNC)", name, len(ms))
				}
				if ms := find(fams[nodeName], group(uidBusy), "resource=L3", "domain=0"); len(ms) != 2 || labelNames(ms[0]) != "class,domain,group,namespace,pod,pod_uid,resource,subdomain" {
					t.Fatalf("%s: %d series, want one per node with subdomain", nodeName, len(ms))
				}
				if name == "resctrl_mon_llc_occupancy_bytes" {
					continue // a gauge that decays between two reads
				}
				cache := one(t, fams, name, group(uidBusy))
				own := one(t, fams, nodeName, group(uidBusy), "subdomain="+node)
				if n := one(t, fams, nodeName, group(uidBusy), "subdomain="+other); n != 0 {
					t.Errorf("%s on node %s, where the pod never ran: %v", nodeName, other, n)
				}
				if own <= 0 || cache != own {
					t.Errorf("%s %v, %s of its nodes %v and 0", name, cache, nodeName, own)
				}
			}
		})
	}
}

// stop stops pid and waits until it is stopped: its CPU time, and so every counter of its
// group, holds still from then on.
func stop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stat := "/proc/" + strconv.Itoa(pid) + "/stat"
	err := poll.Until(20*time.Second, func() error {
		b, err := os.ReadFile(stat)
		if err != nil {
			return err
		}
		// "<pid> (<comm>) T ...": the state follows the last ')'.
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) == 0 || f[0] != "T" {
			return errors.New("not stopped yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// boundTo says whether pid may run on cpu only (taskset has set its affinity).
func boundTo(pid, cpu int) error {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) == strconv.Itoa(cpu) {
			return nil
		}
	}
	return errors.New("not bound yet")
}
