package nriplugin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A pod's lock held (a stopped holder, or resctrl hanging under it): every StartContainer of
// the pod overruns its budget. The first maxWorkers go on in the background; the events
// after them are answered as over budget without being started, saying so, and counted as
// failed: the adapter's goroutines stay bounded however many events come while the hang
// lasts. Once the lock is free the started placements complete and the workers are idle
// again; under fail-open the containers not placed are placed late by their
// PostStartContainer, under fail-closed they were refused.
func TestBudgetWorkersBounded(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		for _, policy := range []config.FailurePolicy{config.FailOpen, config.FailClosed} {
			t.Run(string(policy), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, resctrlsim.Options{}, func(c *config.Config) {
					c.FailurePolicy = policy
					c.HookBudget = config.Duration(minBudget)
				})
				p := e.startAdapter(Options{}).p
				pd := pod(uidA, sbA, "default", "web")
				e.rt.runPod(pd)

				// The runtime sends events one at a time: each of the first maxWorkers waits its
				// budget (100ms) and leaves its work to a worker, which waits for the lock (up
				// to lifecycle's 5 s); the rest find every worker busy.
				const extra = 4
				type started struct {
					ctr *api.Container
					in  *proctest.Init
				}
				var all []started
				for i := range maxWorkers + extra {
					in := proctest.Hold(t, "sleep 600")
					all = append(all, started{&api.Container{Id: fmt.Sprintf("c%02d", i), Name: fmt.Sprintf("c%02d", i), Pid: uint32(in.Pid)}, in})
				}
				st := e.manager().Store()
				held, release := make(chan struct{}), make(chan struct{})
				go func() {
					_ = st.Update(uidA, time.Second, func(*registry.Tx) error { close(held); <-release; return nil })
				}()
				<-held
				released := false
				defer func() {
					if !released {
						close(release)
					}
				}()
				// Only the events between here and the lock's release: 16 budgets, well under
				// the 5 s the first worker waits for the lock.
				var errs []error
				for _, s := range all {
					errs = append(errs, e.rt.sendStart(pd, s.ctr))
				}
				busy := p.workers.Busy()
				close(release)
				released = true
				if busy != maxWorkers {
					t.Errorf("%d workers busy after %d events while the pod's lock was held, want %d", busy, maxWorkers+extra, maxWorkers)
				}
				for i, err := range errs {
					notStarted := i >= maxWorkers
					switch {
					case policy == config.FailOpen && err != nil:
						t.Errorf("%s, fail-open: %v", all[i].ctr.Id, err)
					case policy == config.FailClosed && err == nil:
						t.Errorf("%s, fail-closed: started, want refused over budget", all[i].ctr.Id)
					case policy == config.FailClosed && notStarted && !strings.Contains(err.Error(), "NOT done"):
						t.Errorf("%s: %v; want its placement not started, NOT done", all[i].ctr.Id, err)
					case policy == config.FailClosed && !notStarted && !strings.Contains(err.Error(), "goes on in the background"):
						t.Errorf("%s: %v; want its placement going on in the background", all[i].ctr.Id, err)
					}
				}
				// The started placements complete; the workers are idle again.
				group := "mon_groups/" + uidA
				bound := func(id string) bool { g, err := st.ContainerGroup(id); return err == nil && g != "" }
				if err := pollFor(20*time.Second, func() bool {
					for _, s := range all[:maxWorkers] {
						if !bound(s.ctr.Id) {
							return false
						}
					}
					return p.workers.Busy() == 0
				}); err != nil {
					t.Fatalf("the placements left in the background did not complete: %v", err)
				}
				for _, s := range all[maxWorkers:] {
					if bound(s.ctr.Id) {
						t.Errorf("%s was placed, though its event was answered as not started", s.ctr.Id)
					}
				}
				counts, err := st.Counts()
				if err != nil {
					t.Fatal(err)
				}
				if n := counts[vocab.OutcomeCount(vocab.SourceAdapter, vocab.Failed)]; n != extra {
					t.Errorf("adapter.failed counted %d, want %d (the events not started; all: %v)", n, extra, counts)
				}
				if policy == config.FailClosed {
					return
				}
				// Fail-open: the containers started unplaced; PostStartContainer places them, late.
				var inits []*proctest.Init
				for _, s := range all {
					inits = append(inits, s.in)
				}
				for _, s := range all[maxWorkers:] {
					s.in.Release(t)
					if err := e.rt.sendPostStart(pd, s.ctr); err != nil {
						t.Errorf("%s PostStartContainer: %v", s.ctr.Id, err)
					}
					if !bound(s.ctr.Id) {
						t.Errorf("%s not placed by its PostStartContainer", s.ctr.Id)
					}
				}
				for _, s := range all[:maxWorkers] {
					s.in.Release(t)
				}
				e.placed(group, inits...)
			})
		}
	})
}
