package psi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// A real cgroup's totals rise while its tasks wait for CPU: more busy loops than CPUs.
func TestReadRises(t *testing.T) {
	t.Parallel()
	cg := newCgroup(t)
	before := map[Resource]Pressure{}
	for _, r := range Resources() {
		p, err := Read(cg, r)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Some.Present {
			t.Errorf("%s: no some line in a new cgroup: %+v", r, p)
		}
		before[r] = p
	}
	t.Logf("new cgroup: cpu %q", Format(before[CPU]))
	burn(t, cg, 2*runtime.NumCPU()+1)
	var now Pressure
	err := poll.Until(20*time.Second, func() error {
		var err error
		if now, err = Read(cg, CPU); err != nil {
			return err
		}
		if now.Some.Total <= before[CPU].Some.Total {
			return fmt.Errorf("cpu some total still %d", now.Some.Total)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("busy cgroup: cpu %q", Format(now))
}

func TestReadReasons(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "cpu.pressure"), "garbage\n")
	for _, tc := range []struct {
		name string
		dir  string
		want Reason
	}{
		{"directory gone", filepath.Join(dir, "gone"), ReasonGone},
		{"file missing", dir, ReasonMissing},
		{"garbage", dir, ReasonFormat},
	} {
		r := Memory
		if tc.want == ReasonFormat {
			r = CPU
		}
		_, err := Read(tc.dir, r)
		var re *ReadError
		if !errors.As(err, &re) || re.Reason != tc.want || ReasonOf(err) != tc.want {
			t.Errorf("%s: %v, want reason %s", tc.name, err, tc.want)
		}
	}
	// What cannot be made to happen here: PSI disabled at boot, and a denied open (root
	// passes every mode check).
	for errno, want := range map[error]Reason{unix.EOPNOTSUPP: ReasonUnsupported, unix.EACCES: ReasonPermission,
		unix.EPERM: ReasonPermission, unix.ENODEV: ReasonGone, unix.EIO: ReasonIO} {
		if got := reasonOfOpen(dir, &fs.PathError{Op: "read", Path: "x", Err: errno}); got != want {
			t.Errorf("%v: reason %s, want %s", errno, got, want)
		}
	}
	if got := ReasonOf(errors.New("other")); got != ReasonIO {
		t.Errorf("ReasonOf(other) = %s", got)
	}
}

// cgroup.pressure (Linux 6.1) turns PSI off for one cgroup: its pressure files go away.
func TestReadPSIOff(t *testing.T) {
	t.Parallel()
	cg := newCgroup(t)
	ctl := filepath.Join(cg, "cgroup.pressure")
	if _, err := os.Stat(ctl); err != nil {
		skipOrFail(t, "no per-cgroup PSI switch (cgroup.pressure, Linux 6.1) on this kernel: %v", err)
	}
	if err := os.WriteFile(ctl, []byte("0"), 0); err != nil {
		t.Fatal(err)
	}
	for _, r := range Resources() {
		if _, err := Read(cg, r); ReasonOf(err) != ReasonMissing {
			t.Errorf("%s with PSI off: %v, want reason %s", r, err, ReasonMissing)
		}
	}
}

func TestAvailable(t *testing.T) {
	t.Parallel()
	if err := Available(cgroup.Host{Proc: t.TempDir()}); !errors.Is(err, ErrNoPSI) {
		t.Errorf("no pressure directory: %v", err)
	}
	if _, err := os.Stat("/proc/pressure/cpu"); err == nil {
		if err := Available(cgroup.Host{}); err != nil {
			t.Errorf("this host: %v", err)
		}
	}
}

// ReadAll reads every resource of a cgroup once, each with its own outcome: a file that is
// not there is that resource's error, not the others'.
func TestReadAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, CPU.File()), oldCPU)
	s := ReadAll(dir)
	if p, err := s.Get(CPU); err != nil || p.Some.Total != 385 {
		t.Errorf("cpu: %+v, %v", p, err)
	}
	for _, r := range []Resource{Memory, IO} {
		if _, err := s.Get(r); ReasonOf(err) != ReasonMissing {
			t.Errorf("%s: %v, want reason %s", r, err, ReasonMissing)
		}
	}
	if _, err := s.Get("disk"); err == nil {
		t.Errorf("a resource PSI has not was read")
	}
}
