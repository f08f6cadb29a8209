package permission_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/permission"
)

func pathErr(op, path string, errno syscall.Errno) error {
	return fmt.Errorf("create group: %w", &fs.PathError{Op: op, Path: path, Err: errno})
}

func TestClassify(t *testing.T) {
	t.Parallel()
	root := permission.Process{Known: true, DACOverride: true}
	user := permission.Process{Known: true}
	for _, c := range []struct {
		name  string
		err   error
		p     permission.Process
		cause permission.Cause // "" when not a denial
		want  []string         // in the hint
	}{
		{"AppArmor's default profile on resctrl", pathErr("mkdir", "/sys/fs/resctrl/mon_groups/x", syscall.EACCES), root,
			permission.CauseLSM, []string{"an LSM", "deny /sys/fs/[^c]*/** wklx", "/sys/fs/resctrl/mon_groups/x", "appArmorProfile", "spc_t"}},
		{"an LSM on the state dir", pathErr("open", "/run/resctrl-mon/groups/x.json", syscall.EACCES), root,
			permission.CauseLSM, []string{"an LSM", "does not allow writing /run/resctrl-mon/groups/x.json", "spc_t"}},
		{"resctrl mounted outside /sys", pathErr("open", "/host/resctrl/mon_groups/x/tasks", syscall.EACCES), root,
			permission.CauseLSM, []string{"does not allow writing /host/resctrl"}},
		{"no CAP_DAC_OVERRIDE", pathErr("mkdir", "/sys/fs/resctrl/mon_groups/x", syscall.EACCES), user,
			permission.CauseFileMode, []string{"owner and mode of /sys/fs/resctrl/mon_groups/x", "CAP_DAC_OVERRIDE"}},
		{"another process's EACCES", pathErr("mkdir", "/sys/fs/resctrl/mon_groups/x", syscall.EACCES), permission.Process{},
			permission.CauseUnknownWriter, []string{"if the writer runs as root", "an LSM", "deny /sys/fs/[^c]*/** wklx", "owner and mode"}},
		{"a task not ours to move", pathErr("write", "/sys/fs/resctrl/mon_groups/x/tasks", syscall.EPERM), root,
			permission.CauseTaskOwner, []string{"root of the host's user namespace", "hostUsers"}},
		{"a capability", pathErr("mount", "/sys/fs/resctrl", syscall.EPERM), root,
			permission.CauseCapability, []string{"capabilit", "/sys/fs/resctrl"}},
		{"a read-only /sys", pathErr("mkdir", "/sys/fs/resctrl/mon_groups/x", syscall.EROFS), root,
			permission.CauseReadOnly, []string{"read-only mount", "hostPath"}},
		{"a bare errno", syscall.EACCES, root, permission.CauseLSM, []string{"the write"}},
		{"not a refusal", pathErr("mkdir", "/sys/fs/resctrl/mon_groups/x", syscall.ENOSPC), root, "", nil},
		{"no errno", errors.New("permission denied"), root, "", nil},
		{"nil", nil, root, "", nil},
	} {
		d, ok := permission.Classify(c.err, c.p)
		if ok != (c.cause != "") {
			t.Errorf("%s: denial %v, want %v", c.name, ok, c.cause != "")
			continue
		}
		if !ok {
			if got := permission.Explain(c.err, c.p); got != c.err { //nolint:errorlint // the very error, unwrapped, is what must come back
				t.Errorf("%s: Explain changed a non-refusal: %v", c.name, got)
			}
			continue
		}
		if d.Cause != c.cause {
			t.Errorf("%s: cause %s, want %s", c.name, d.Cause, c.cause)
		}
		for _, w := range c.want {
			if !strings.Contains(d.Hint, w) {
				t.Errorf("%s: hint %q lacks %q", c.name, d.Hint, w)
			}
		}
		e := permission.Explain(c.err, c.p)
		if !errors.Is(e, d.Errno) || !strings.HasPrefix(e.Error(), c.err.Error()) || !strings.Contains(e.Error(), string(c.cause)) {
			t.Errorf("%s: Explain: %v (is %v: %v)", c.name, e, d.Errno, errors.Is(e, d.Errno))
		}
		if errors.Is(c.err, fs.ErrPermission) && !errors.Is(e, fs.ErrPermission) {
			t.Errorf("%s: Explain lost fs.ErrPermission", c.name)
		}
	}
}

func TestDefaultProfileDeny(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"/sys/fs/resctrl/mon_groups/x":      "/sys/fs/[^c]*/**",
		"/sys/fs/resctrl/tasks":             "/sys/fs/[^c]*/**",
		"/sys/fs/resctrl":                   "", // the rule needs something below it
		"/sys/fs/cgroup/kubepods/cpu.max":   "",
		"/sys/fs/cgx/a":                     "/sys/fs/cg[^r]*/**",
		"/sys/fs/ca/a":                      "/sys/fs/c[^g]*/**",
		"/sys/fs/c/a":                       "",
		"/sys/kernel/mm/x":                  "/sys/[^f]*/**",
		"/sys/firmware/x":                   "/sys/f[^s]*/**",
		"/sys/fsx/a":                        "",
		"/sys//fs/./resctrl/mon_groups/x":   "/sys/fs/[^c]*/**",
		"/host/sys/fs/resctrl/mon_groups/x": "",
		"sys/fs/resctrl/mon_groups/x":       "",
		"/run/resctrl-mon/x":                "",
		"":                                  "",
	} {
		if got := permission.DefaultProfileDeny(path); got != want {
			t.Errorf("%q: %q, want %q", path, got, want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, status string
		want         permission.Process
		err          bool
	}{
		{"root in a container", "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t00000000a80425fb\n", permission.Process{Known: true, DACOverride: true}, false},
		{"all dropped", "CapEff:\t0000000000000000\n", permission.Process{Known: true}, false},
		{"only CAP_DAC_OVERRIDE", "CapEff:\t0000000000000002\n", permission.Process{Known: true, DACOverride: true}, false},
		{"no line", "Name:\tx\n", permission.Process{}, true},
		{"not hex", "CapEff:\tzz\n", permission.Process{}, true},
	} {
		got, err := permission.ParseStatus(strings.NewReader(c.status))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s: %+v, %v", c.name, got, err)
		}
	}
}

// TestSelf: this process's status parses (root here or not, it is Known).
func TestSelf(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	if p := permission.Self(); !p.Known {
		t.Errorf("Self: %+v", p)
	}
}

func TestClassifyText(t *testing.T) {
	t.Parallel()
	root := permission.Process{Known: true, DACOverride: true}
	explained := permission.Explain(pathErr("mkdir", "/sys/fs/resctrl/mon_groups/x", syscall.EACCES), root).Error()
	for _, c := range []struct {
		name, msg string
		cause     permission.Cause
		path      string
	}{
		{"a recorded mkdir", "create group mon_groups/x: mkdir /sys/fs/resctrl/mon_groups/x: permission denied (resctrl: ok)",
			permission.CauseUnknownWriter, "/sys/fs/resctrl/mon_groups/x"},
		{"a recorded tasks write", "assign pid 7 to mon_groups/x: write /sys/fs/resctrl/mon_groups/x/tasks: operation not permitted",
			permission.CauseTaskOwner, "/sys/fs/resctrl/mon_groups/x/tasks"},
		{"read-only", "mkdir /sys/fs/resctrl/mon_groups/x: read-only file system", permission.CauseReadOnly, "/sys/fs/resctrl/mon_groups/x"},
		{"explained by its writer", explained, permission.CauseLSM, "/sys/fs/resctrl/mon_groups/x"},
		{"no path", "something: permission denied", permission.CauseUnknownWriter, ""},
		{"not a refusal", "mkdir /sys/fs/resctrl/mon_groups/x: no space left on device", "", ""},
	} {
		d, ok := permission.ClassifyText(c.msg)
		if ok != (c.cause != "") {
			t.Errorf("%s: denial %v", c.name, ok)
			continue
		}
		if !ok {
			continue
		}
		if d.Cause != c.cause || d.Path != c.path {
			t.Errorf("%s: %s at %q, want %s at %q", c.name, d.Cause, d.Path, c.cause, c.path)
		}
		if strings.Count(d.Error(), " [") != 1 || !strings.Contains(d.Error(), c.path) {
			t.Errorf("%s: %q", c.name, d.Error())
		}
	}
}

func FuzzClassifyText(f *testing.F) {
	f.Add("mkdir /sys/fs/resctrl/mon_groups/x: permission denied")
	f.Add("write /a/tasks: operation not permitted [task-owner: x]")
	f.Add(" [lsm: ]: read-only file system")
	f.Fuzz(func(t *testing.T, msg string) {
		d, ok := permission.ClassifyText(msg)
		if !ok {
			return
		}
		if d.Path != "" && !strings.Contains(msg, d.Path) {
			t.Errorf("path %q is not in %q", d.Path, msg)
		}
		if d.Cause == "" || d.Hint == "" {
			t.Errorf("%q: %+v", msg, d)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	f.Add("CapEff:\t00000000a80425fb\n")
	f.Add("CapEff:\n")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := permission.ParseStatus(strings.NewReader(s))
		if err != nil && p.Known {
			t.Errorf("%q: known with an error", s)
		}
	})
}
