package wrapper

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The joiner is this test binary, started as the wrapper starts its own.
func TestMain(m *testing.M) {
	JoinIfAsked()
	os.Exit(m.Run())
}

// joinEnv is a simulated resctrl with one group, and a process to place in it.
type joinEnv struct {
	sim   *resctrlsim.Sim
	group target
	pid   int
	log   string
}

func newJoinEnv(t *testing.T) *joinEnv {
	t.Helper()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	g := target{Path: "mon_groups/g"}
	if err := os.Mkdir(filepath.Join(sim.Dir, g.Path), 0o755); err != nil {
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "600")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sleep.Process.Kill()
		_ = sleep.Wait()
	})
	return &joinEnv{sim: sim, group: g, pid: sleep.Process.Pid, log: filepath.Join(t.TempDir(), "log")}
}

func (e *joinEnv) request(deadline time.Time) joinRequest {
	return joinRequest{Group: e.group, Root: e.sim.Dir, Simulator: true, Tid: e.pid, Parent: os.Getpid(), Container: "c1",
		Deadline: deadline, Log: "file:" + e.log}
}

func (e *joinEnv) placed(t *testing.T) bool {
	t.Helper()
	tids, err := e.sim.Tasks(e.group.Path)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Contains(tids, e.pid)
}

// The joiner writes the task and says so; one told that its wrapper is gone (its parent is
// not the one named) writes nothing; a bad group's reason crosses back to the wrapper.
func TestJoinAside(t *testing.T) {
	t.Parallel()
	e := newJoinEnv(t)
	gone := e.request(time.Now().Add(time.Minute))
	gone.Parent = 1
	if err := joinAside(gone); !strings.Contains(err.Error(), errGone.Error()) {
		t.Errorf("a joiner whose wrapper has ended: %v, want %q", err, errGone)
	}
	if e.placed(t) {
		t.Errorf("a joiner whose wrapper has ended placed pid %d", e.pid)
	}
	if err := joinAside(e.request(time.Now().Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if !e.placed(t) {
		t.Errorf("pid %d is not in %s after the join", e.pid, e.group.Path)
	}
	missing := e.request(time.Now().Add(time.Minute))
	missing.Group.Path = "mon_groups/none"
	if err := joinAside(missing); err == nil || !strings.Contains(err.Error(), "mon_groups/none/tasks") {
		t.Errorf("a group that is not there: %v, want an error naming its tasks file", err)
	}
	if b, _ := os.ReadFile(e.log); len(b) != 0 {
		t.Errorf("joins within their deadline were logged:\n%s", b)
	}
}

// Past the deadline the wrapper stops waiting (ErrBudget) while the write is still in the
// simulator; the joiner finishes on its own, the task placed late, and logs so.
func TestJoinAsidePastDeadline(t *testing.T) {
	t.Parallel()
	e := newJoinEnv(t)
	e.sim.SetLatency(resctrlsim.OpTasksWrite, time.Second)
	if err := joinAside(e.request(time.Now().Add(100 * time.Millisecond))); !errors.Is(err, ErrBudget) {
		t.Fatalf("%v, want ErrBudget", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(e.log)
		if bytes.Contains(b, []byte("after its budget")) {
			if !bytes.Contains(b, []byte("container=c1")) || !bytes.Contains(b, []byte("group="+e.group.Path)) || bytes.Contains(b, []byte("err=")) {
				t.Errorf("the late line does not say which exec was placed where:\n%s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the joiner did not log its late join: %q", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !e.placed(t) {
		t.Errorf("pid %d is not in %s after the late join", e.pid, e.group.Path)
	}
}

// Prepare for an exec of a container with a group has the joiner place it; the joiner's
// failure (here: the root is no resctrl) is the exec's, logged under fail-open, refused with
// the reason under fail-closed.
func TestPrepareExecJoinFails(t *testing.T) {
	t.Parallel()
	rt := fakeRuntime(t)
	for _, policy := range []string{"open", "closed"} {
		environ, dir := env(t, rt, "resctrlRoot: "+t.TempDir()+"\nfailurePolicy: "+policy+"\n")
		st, err := registry.Open(filepath.Join(dir, "state"))
		if err != nil {
			t.Fatal(err)
		}
		err = st.Update("g", time.Second, func(tx *registry.Tx) error {
			tx.Rec.Path = "mon_groups/g"
			return tx.Save()
		})
		if err = errors.Join(err, st.BindContainer("c1", "g")); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		_, err = Prepare([]string{"runc", "exec", "c1", "true"}, environ, os.Getpid(), &stderr)
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		if !bytes.Contains(log, []byte("action=failed")) || !bytes.Contains(log, []byte("resctrl root")) {
			t.Errorf("%s: the log does not say why the exec was not placed:\n%s", policy, log)
		}
		if policy == "open" && err != nil {
			t.Errorf("fail-open: %v", err)
		}
		if policy == "closed" && (err == nil || !strings.Contains(stderr.String(), "failurePolicy: closed") || !strings.Contains(stderr.String(), "resctrl root")) {
			t.Errorf("fail-closed: %v, stderr %q; want a refusal with the joiner's reason", err, stderr.String())
		}
	}
}
