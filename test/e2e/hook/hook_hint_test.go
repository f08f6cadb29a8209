package hook_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestHookBrokenConfigStatesClosed: a config file that cannot be loaded, but states
// failurePolicy: closed in a form YAML allows, refuses under runc a container it cannot place
// (docs/reference/failure-policy.md), whatever the form: the value on the next line, a block
// scalar, a document indented throughout, an explicit key, a file over the loader's 1 MiB.
// Read as open, each would start the container outside any group. One file stating open in
// such a form starts it.
func TestHookBrokenConfigStatesClosed(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	r := e2e.PreparedRuntime(t, "runc")
	big := strings.Repeat("# "+strings.Repeat("x", 98)+"\n", (1<<20)/100+1)
	for i, c := range []struct{ name, text, want string }{
		{"next line", "failurePolicy:\n  closed\nretention: soon\n", "closed"},
		{"block scalar", "failurePolicy: |-\n  closed\n\tx: 1\n", "closed"},
		{"indented throughout", "  retention: 5m\n  failurePolicy: closed\n\tx: 1\n", "closed"},
		{"explicit key", "? failurePolicy\n: closed\n\tx: 1\n", "closed"},
		{"over 1 MiB", "failurePolicy: closed\n" + big, "closed"},
		{"open on the next line", "failurePolicy:\n  open\n\tx: 1\n", "open"},
	} {
		if err := os.WriteFile(e.CfgPath, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("c%d", i)
		err := r.Run(id, e.Bundle(e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"), "sh", "-c", "sleep 600"))
		switch {
		case c.want == "closed" && err == nil:
			t.Errorf("%s: the broken config states closed; runc started the container", c.name)
		case c.want == "closed" && !strings.Contains(err.Error(), "config"):
			t.Errorf("%s: refused without naming the config: %v", c.name, err)
		case c.want == "open" && err != nil:
			t.Errorf("%s: the broken config states open; runc refused: %v", c.name, err)
		}
		_ = r.Delete(id, true)
	}
}
