package lifecycle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
)

// A container whose runtime made a monitoring group of its own (enableMonitoring: runc ≥ 1.4
// makes <class>/mon_groups/<id> and puts the init in it before the hooks) ends in one group
// only, with one RMID: the pod's (or its ctr- group), the runtime's removed. For each class
// the runtime may put it in, each grouping, and a runtime's group already gone (removed by
// hand, or a second front end placing the same init).
func TestRuntimeGroupRemoved(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		class      string
		perCtr     bool
		alreadyOff bool
	}{
		"root class":                 {},
		"in a class":                 {class: "gold"},
		"per container":              {perCtr: true},
		"per container, in a class":  {class: "gold", perCtr: true},
		"runtime's group gone first": {alreadyOff: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, bareFake(8), withConfig(func(cfg *config.Config) {
				if c.perCtr {
					cfg.Granularity = config.PerContainer
				}
			}))
			fake := e.fake
			pid, id := os.Getpid(), strings.Repeat("ab", 32)
			fake.JoinClass(pid, c.class)
			theirs, err := fake.RuntimeGroup(c.class, id, pid)
			if err != nil {
				t.Fatal(err)
			}
			if c.alreadyOff {
				if err := fake.Remove(resctrlfs.Addr{Class: c.class, Name: id}); err != nil {
					t.Fatal(err)
				}
			}
			a := crio(podA, sbA)
			idn, err := identity.FromAnnotations(id, a)
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.m.Place(Placement{ContainerID: id, Pid: pid, Pod: idn, Annotations: a, Class: c.class, RuntimeGroup: true})
			if err != nil || out.Action != vocab.Created {
				t.Fatalf("placed %+v, %v; want created", out, err)
			}
			if tasks, _ := fake.Tasks(resctrlfake.At(out.Group)); !tasks[pid] {
				t.Errorf("%s holds %v, not the init %d", out.Group, tasks, pid)
			}
			if fake.Exists(resctrlfake.At(theirs)) {
				t.Errorf("the runtime's group %s is still there, holding an RMID", theirs)
			}
			if n := fake.Count(); n != 1 {
				t.Errorf("%d groups (RMIDs) for one container, want 1", n)
			}
			// The outcome says what was done: nothing, when the group was gone already.
			if said := strings.Contains(out.Detail, "the runtime's group "+theirs+" removed"); said == c.alreadyOff {
				t.Errorf("the outcome says %q (the group was there: %v)", out.Detail, !c.alreadyOff)
			}
		})
	}
}

// Without enableMonitoring the runtime made no group of its own: a group of that name is
// someone else's, and left.
func TestRuntimeGroupLeftWithoutEnableMonitoring(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8))
	fake := e.fake
	pid, id := os.Getpid(), strings.Repeat("cd", 32)
	other := "mon_groups/" + id
	if err := fake.Mkdir(other); err != nil {
		t.Fatal(err)
	}
	if out, err := e.place(id, pid, crio(podA, sbA), ""); err != nil || out.Action != vocab.Created {
		t.Fatalf("placed %+v, %v", out, err)
	}
	if !fake.Exists(resctrlfake.At(other)) {
		t.Errorf("%s removed although the spec did not ask the runtime to make it", other)
	}
}

// A placement that fails removes nothing of the runtime's: the container is still counted
// where the runtime put it.
func TestRuntimeGroupKeptWhenPlacementFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8))
	fake := e.fake
	pid, id := os.Getpid(), strings.Repeat("ef", 32)
	// The spec names class gold, the runtime put the init (and its group) in silver: the
	// kernel refuses the move.
	fake.JoinClass(pid, "silver")
	theirs, err := fake.RuntimeGroup("silver", id, pid)
	if err != nil {
		t.Fatal(err)
	}
	a := crio(podA, sbA)
	idn, _ := identity.FromAnnotations(id, a)
	if _, err := e.m.Place(Placement{ContainerID: id, Pid: pid, Pod: idn, Annotations: a, Class: "gold", RuntimeGroup: true}); err == nil {
		t.Fatal("placed an init outside its spec's class")
	}
	if tasks, _ := fake.Tasks(resctrlfake.At(theirs)); !tasks[pid] {
		t.Errorf("the runtime's group %s lost the init: %v", theirs, tasks)
	}
}

// RuncMadeGroup takes a held init by its command name, as runc's and crun's inits name
// themselves: real processes under those names (an exec through a link so named).
func TestRuncMadeGroup(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep on PATH")
	}
	for _, c := range []struct {
		name       string
		monitoring bool
		want       bool
	}{
		{"runc:[2:INIT]", true, true},
		{"runc:[2:INIT]", false, false},
		{"crun", true, false},
		{"youki", true, false},
	} {
		link := filepath.Join(t.TempDir(), c.name)
		if err := os.Symlink(sleep, link); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(link, "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		got := RuncMadeGroup(c.monitoring, cmd.Process.Pid)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if got != c.want {
			t.Errorf("an init named %q, enableMonitoring %v: %v, want %v", c.name, c.monitoring, got, c.want)
		}
	}
	if RuncMadeGroup(true, 1<<30) {
		t.Error("a pid that is not there is taken as runc's")
	}
}
