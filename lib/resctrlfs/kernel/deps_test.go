package kernel_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const (
	goresctrl = "github.com/intel/goresctrl"
	self      = "github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
)

// Nothing of the module links goresctrl but this package and the binaries that hand its Open
// to what they run: the library, the front ends' logic and the read side know the seam only
// (lib/resctrlfs), so its errors and its group names are the ones they are tested with.
func TestOnlyKernelLinksGoresctrl(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go on PATH: it asks go list what each package links")
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}} {{join .Imports \",\"}} {{join .Deps \",\"}}", "./...")
	cmd.Dir = "../../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var checked int
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		checked++
		pkg, name := f[0], f[1]
		var imports, deps []string
		if len(f) > 2 {
			imports = strings.Split(f[2], ",")
		}
		if len(f) > 3 {
			deps = strings.Split(f[3], ",")
		}
		links := slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, goresctrl) })
		wires := name == "main" && slices.Contains(imports, self)
		if links && pkg != self && !wires {
			t.Errorf("%s links goresctrl: only lib/resctrlfs/kernel may, and the binaries that hand its Open on", pkg)
		}
	}
	if checked < 50 {
		t.Fatalf("go list named %d packages, want the module's", checked)
	}
}
