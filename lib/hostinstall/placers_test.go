package hostinstall

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestPlacerName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmdline, want string
		ok            bool
	}{
		{"/usr/local/bin/resctrl-mon-nri\x00--config=/etc/resctrl-mon/config.yaml\x00", "resctrl-mon-nri", true},
		{"/usr/local/bin/resctrl-mon\x00--config=/etc/resctrl-mon/config.yaml\x00reconcile\x00--every=1m\x00", "resctrl-mon reconcile", true},
		{"/usr/local/libexec/oci/hooks.d/resctrl-mon-hook\x00createRuntime\x00", "resctrl-mon-hook", true},
		{"resctrl-mon-runtime\x00exec\x00", "resctrl-mon-runtime", true},
		{"/usr/local/bin/resctrl-mon\x00--config=x\x00serve\x00", "", false},
		{"/usr/local/bin/resctrl-mon\x00host\x00uninstall\x00--release-groups\x00", "", false},
		{"/usr/local/bin/resctrl-mon\x00host\x00pause\x00", "", false},
		{"/bin/sh\x00-c\x00resctrl-mon reconcile\x00", "", false},
		{"", "", false},
		{"\x00\x00", "", false},
	} {
		if got, ok := placerName([]byte(tc.cmdline)); got != tc.want || ok != tc.ok {
			t.Errorf("%q: %q %v, want %q %v", tc.cmdline, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzPlacerName(f *testing.F) {
	f.Add([]byte("/usr/local/bin/resctrl-mon\x00reconcile\x00"))
	f.Fuzz(func(t *testing.T, cmdline []byte) {
		if name, ok := placerName(cmdline); ok != (name != "") {
			t.Errorf("%q: %q %v", cmdline, name, ok)
		}
	})
}

// Placers reads a /proc tree: numbered directories, their cmdline; one gone meanwhile (no
// cmdline) is not there.
func TestPlacers(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	for pid, cmdline := range map[int]string{
		1:   "/sbin/init\x00",
		42:  "/usr/local/bin/resctrl-mon-nri\x00--nri-idx=10\x00",
		77:  "/usr/local/bin/resctrl-mon\x00serve\x00",
		101: "",
	} {
		write(t, filepath.Join(proc, strconv.Itoa(pid), "cmdline"), cmdline)
	}
	if err := os.MkdirAll(filepath.Join(proc, "9"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(proc, "self", "cmdline"), "/usr/local/bin/resctrl-mon-nri\x00")
	got, err := Placers(proc)
	if err != nil || !slices.Equal(got, []Placer{{PID: 42, Cmd: "resctrl-mon-nri"}}) {
		t.Errorf("Placers = %+v, %v", got, err)
	}
	if _, err := Placers(filepath.Join(proc, "none")); err == nil {
		t.Error("no /proc: no error")
	}
}
