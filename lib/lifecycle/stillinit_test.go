package lifecycle

import (
	"errors"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
)

// stillInit is Place's last word before the write: the init is where its runtime put it and
// the process whose start time Place read first. A pid in another cgroup, a start time that
// changed (the pid went to a later process) and a pid that exited are each refused. Resctrl
// is not touched: "sim" reads the host's /proc and real cgroups, "fake" its env's /proc.
func TestStillInit(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		in, other := e.hold(0), e.hold(0)
		gone, end := proctest.Asleep(t)
		goneStat, err := procfs.ReadStat(gone)
		if err != nil {
			t.Fatal(err)
		}
		end()
		st, err := procfs.ReadStat(in.Pid)
		if err != nil {
			t.Fatal(err)
		}
		later := st
		later.StartTime++
		for _, tc := range []struct {
			name        string
			pid         int
			cgroupsPath string
			st          procfs.Stat
			want        string // "" for no error
			elsewhere   bool   // the error is cgroup.ErrElsewhere
		}{
			{name: "the init in its cgroup", pid: in.Pid, cgroupsPath: in.cgroupsPath(), st: st},
			{name: "no cgroup named: the start time alone", pid: in.Pid, st: st},
			{name: "another container's cgroup", pid: in.Pid, cgroupsPath: other.cgroupsPath(), st: st, want: "not in the container's cgroup", elsewhere: true},
			{name: "a later process", pid: in.Pid, cgroupsPath: in.cgroupsPath(), st: later, want: "no longer the process it was"},
			{name: "exited", pid: gone, st: goneStat, want: "no longer the process it was"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := e.m.stillInit(Placement{Pid: tc.pid, CgroupsPath: tc.cgroupsPath}, tc.st)
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("stillInit: %v", err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("stillInit: %v, want an error saying %q", err, tc.want)
				case errors.Is(err, cgroup.ErrElsewhere) != tc.elsewhere:
					t.Errorf("stillInit: %v, errors.Is(ErrElsewhere) %v, want %v", err, !tc.elsewhere, tc.elsewhere)
				}
			})
		}
	})
}
