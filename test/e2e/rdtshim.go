package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// RDTRunc is the runc ≥ 1.4 of the test cache (test/runtimes/runc.sh) driven through
// rdtshim, so that it applies linux.intelRdt, enableMonitoring included, on a simulator:
// runc's own code makes the class and mon_groups/<id> and writes the init there.
type RDTRunc struct {
	*Runtime
	// Dir holds the shim's supervisors' pid files (while they live) and their log.
	Dir string
	// Plain is the same runc, with the same state directory, not through the shim.
	Plain *Runtime
}

// NewRDTRunc returns the cached runc through rdtshim, with the simulator mounted at sim
// seen at /sys/fs/resctrl. It skips (fails under RESCTRLSIM_REQUIRE=1) where runc is not
// built or the machine is not linux/amd64 (the shim's seccomp filter knows x86_64's
// statfs only). When the test ends, after its containers are deleted, every supervisor
// the shim started must be gone: one still there is killed and the test fails.
func NewRDTRunc(t testing.TB, sim string) *RDTRunc {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		unavailable(t, "e2e: rdtshim runs on linux/amd64 only, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	BuildBinaries(t)
	base := NewRuntime(t, filepath.Join(RuntimeBins(t, "runc"), "runc"))
	dir := shortTempDir(t, "e2e-rdtshim-")
	r := &RDTRunc{Runtime: base.Via(Binaries.RDTShim, "RDTSHIM_RUNC="+base.Bin, "RDTSHIM_RESCTRL="+sim, "RDTSHIM_DIR="+dir), Dir: dir, Plain: base}
	// Registered before any container (whose force-delete is registered at its create),
	// so it runs after they are gone, when no task is left under a filter.
	t.Cleanup(func() {
		err := poll.Until(10*time.Second, func() error {
			if live := r.supervisors(); len(live) > 0 {
				return fmt.Errorf("rdtshim supervisors still running: %v", live)
			}
			return nil
		})
		if err != nil {
			for _, pid := range r.supervisors() {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
			t.Errorf("%v (killed)\n%s", err, r.Log())
		}
	})
	return r
}

// supervisors are the shim's supervisor processes still running.
func (r *RDTRunc) supervisors() []int {
	files, _ := filepath.Glob(filepath.Join(r.Dir, "supervisor-*"))
	var live []int
	for _, f := range files {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(f), "supervisor-"))
		if err != nil {
			continue
		}
		// A pid file outlives a supervisor that was killed: the process is checked, and
		// only the shim's (its executable), not a zombie, counts.
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || exe != Binaries.RDTShim {
			continue
		}
		if st, err := procfs.ReadStat(pid); err == nil && st.State == 'Z' {
			continue
		}
		live = append(live, pid)
	}
	return live
}

// Log is what the supervisors logged: one line per statfs they answered as resctrl.
func (r *RDTRunc) Log() string {
	b, err := os.ReadFile(filepath.Join(r.Dir, "supervisor.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err.Error()
	}
	return string(b)
}

// Faked is how many statfs calls of /sys/fs/resctrl the supervisors answered as resctrl.
func (r *RDTRunc) Faked() int {
	return strings.Count(r.Log(), "answered as resctrl")
}

// Wrapper writes, once, an executable script that runs this runc through the shim with the
// shim's environment, and returns its path: a runtime that takes a runc binary and no
// environment for it (containerd's runc runtime, BinaryName) runs the real runc 1.5.1 on
// the simulator through it.
func (r *RDTRunc) Wrapper(t testing.TB) string {
	t.Helper()
	path := filepath.Join(r.Dir, "runc")
	script := "#!/bin/sh\nexec env"
	for _, kv := range r.Env {
		script += " " + shellQuote(kv)
	}
	script += " " + shellQuote(r.Bin) + " \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatalf("e2e: rdtshim wrapper: %v", err)
	}
	return path
}

// RDTClass is a class the real runc's tests place a pod in: its closID in the spec, and its
// directory below the resctrl root as a prefix of group paths ("" for the root).
type RDTClass struct{ Name, ClosID, Dir string }

// RDTClasses are "gold", made before the containers, and the root by name ("/", runtime-spec
// 1.3).
var RDTClasses = []RDTClass{{"gold", "gold", "gold/"}, {"root", "/", ""}}

// MakeClass makes c's directory on e's simulator, as an admin would before its containers;
// the root is there already.
func (e *HookEnv) MakeClass(t testing.TB, c RDTClass) {
	t.Helper()
	if c.Dir == "" {
		return
	}
	if err := os.Mkdir(filepath.Join(e.Sim.Dir, c.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
}
