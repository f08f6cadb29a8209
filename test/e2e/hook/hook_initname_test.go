package hook_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// nameAtCreateRuntime is a createRuntime hook that writes the command name of the
// container's init, as the hook reads it (lifecycle.RuncMadeGroup), to the file $1.
const nameAtCreateRuntime = `pid=$(tr , '\n' | sed -n 's/^ *"pid": *\([0-9][0-9]*\).*/\1/p'); cat /proc/$pid/comm >"$1"`

// TestInitNameAtCreateRuntime checks what lifecycle.RuncMadeGroup takes a runtime by: the
// command name of the container's init, held by its runtime while createRuntime hooks run.
// runc's is "runc:[2:INIT]" (Debian's 1.1, and the runc ≥ 1.4 of test/runtimes/runc.sh, the
// versions that make a group of their own), crun's "crun": only runc's group is removed.
func TestInitNameAtCreateRuntime(t *testing.T) {
	t.Parallel()
	rootfs := e2e.Rootfs(t, nil)
	for _, c := range []struct{ name, bin, want string }{
		{"runc-debian", "runc", "runc:[2:INIT]"},
		{"runc-1.4+", "cache", "runc:[2:INIT]"},
		{"crun", "crun", "crun"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var r *e2e.Runtime
			if c.bin == "cache" {
				r = e2e.NewRuntime(t, filepath.Join(e2e.RuntimeBins(t, "runc"), "runc"))
			} else {
				r = e2e.PreparedRuntime(t, c.bin)
			}
			out := filepath.Join(t.TempDir(), "comm")
			hooks := &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", "-c", nameAtCreateRuntime, "sh", out}, Timeout: e2e.IntPtr(10)}}}
			b := e2e.NewBundle(t, rootfs, e2e.BundleOptions{Args: []string{"/bin/sh", "-c", "sleep 60"}, Hooks: hooks})
			if err := r.Create("initname-"+c.name, b); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("the hook wrote no name: %v", err)
			}
			if name := strings.TrimSpace(string(got)); name != c.want {
				t.Errorf("%s's init is named %q at createRuntime, want %q", r.Name(), name, c.want)
			}
		})
	}
}
