package install_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// shipped are the binaries `make build` writes to bin/ that leave this repository: the
// image holds them all, and in hooks mode the hook and the CLI run on the host.
var shipped = []string{"resctrl-mon", "resctrl-mon-hook", "resctrl-mon-nri", "resctrl-mon-runtime"}

// TestBuildStatic: every binary `make build` ships is statically linked, so it runs from a
// FROM-scratch image and on a host whatever its libc.
func TestBuildStatic(t *testing.T) {
	mustMake(t, "build")
	for _, name := range shipped {
		if err := e2e.CheckStatic(filepath.Join("../../../bin", name)); err != nil {
			t.Errorf("make build: %v", err)
		}
	}
}

// TestCheckStatic: the check itself tells a dynamic binary (this host's ls, linked to libc)
// from a static one (busybox-static), and says why.
func TestCheckStatic(t *testing.T) {
	t.Parallel()
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Fatal(err)
	}
	if err := e2e.CheckStatic(ls); !errors.Is(err, e2e.ErrDynamic) {
		t.Errorf("CheckStatic(%s) = %v, want ErrDynamic", ls, err)
	}
	if err := e2e.CheckStatic("/bin/busybox"); err != nil {
		t.Errorf("CheckStatic(busybox-static) = %v", err)
	}
	if err := e2e.CheckStatic("static_test.go"); err == nil || errors.Is(err, e2e.ErrDynamic) {
		t.Errorf("CheckStatic(a Go source file) = %v, want an ELF read error", err)
	}
}
