package resctrlfake_test

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The conformance tests run one script against the fake and against the simulator (through
// lib/resctrlfs/kernel's Groups, as lifecycle opens it) and hold both to the same words: what a decision
// test sees on the fake is what the file operations give. The fake half always runs; the
// simulator half skips without root or FUSE (resctrlsim.MountT).

// backend is one resctrl a script runs on, with what the script does outside Groups: a
// runtime putting a task in a class, an administrator switching the counter mode.
type backend struct {
	rs      resctrlfs.Groups
	class   func(t *testing.T, tid int, class string) // tid into class's own group ("" the root)
	setMode func(t *testing.T, mode string)           // a write to info/L3_MON/mbm_assign_mode
	mkdir   func(t *testing.T, path string) error     // another process's mkdir of a group
}

// step is one operation and what the kernel says to it, as say and the readers below word it.
type step struct {
	do   string
	run  func(t *testing.T, b *backend, tids map[string]int) string
	want string
}

// fakeBackend is the fake: rmids RMIDs for monitoring groups, counters as setup makes them.
func fakeBackend(rmids int, setup func(*resctrlfake.Resctrl)) *backend {
	f := resctrlfake.New(rmids)
	if setup != nil {
		setup(f)
	}
	return &backend{rs: f,
		class:   func(_ *testing.T, tid int, class string) { f.JoinClass(tid, class) },
		setMode: func(_ *testing.T, mode string) { f.SwitchMode(mode) },
		mkdir:   func(_ *testing.T, path string) error { return f.Mkdir(path) }}
}

// simBackend is the simulator mounted with o, its classes made; a class's own group takes
// an RMID of the simulator's (the fake does not count it), so o.NumRMIDs must allow for it.
func simBackend(t *testing.T, o resctrlsim.Options, classes ...string) *backend {
	sim := resctrlsim.MountT(t, o)
	for _, c := range classes {
		if err := os.Mkdir(filepath.Join(sim.Dir, c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	k, err := lifecycle.OpenResctrl(kernel.Open, sim.Dir, resctrlfs.CheckSimulator, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, file, text string) {
		if err := os.WriteFile(filepath.Join(sim.Dir, file), []byte(text), 0); err != nil {
			t.Fatalf("write %s: %v", file, err)
		}
	}
	return &backend{rs: k,
		class: func(t *testing.T, tid int, class string) {
			write(t, filepath.Join(class, "tasks"), strconv.Itoa(tid)+"\n")
		},
		setMode: func(t *testing.T, mode string) { write(t, "info/L3_MON/mbm_assign_mode", mode+"\n") },
		mkdir:   func(_ *testing.T, path string) error { return os.Mkdir(filepath.Join(sim.Dir, path), 0o755) }}
}

// run runs the script on b with processes of its own as tasks t1, t2, t3, and reports every
// step whose words differ from the script's.
func run(t *testing.T, b *backend, script []step) {
	tids := map[string]int{}
	for _, name := range []string{"t1", "t2", "t3"} {
		cmd := exec.Command("sleep", "600")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		tids[name] = cmd.Process.Pid
	}
	for i, s := range script {
		if got := s.run(t, b, tids); got != s.want {
			t.Errorf("step %d, %s:\n got %s\nwant %s", i, s.do, got, s.want)
		}
	}
}

// say words an error as the kernel and goresctrl tell it, through the seam: resctrlfs's
// sentinel, the errno and, with an errno, last_cmd_status.
func say(b *backend, err error) string {
	if err == nil {
		return "ok"
	}
	var words []string
	for name, e := range map[string]error{"ErrNoRMID": resctrlfs.ErrNoRMID, "ErrClassMismatch": resctrlfs.ErrClassMismatch,
		"ErrNotTracked": resctrlfs.ErrNotTracked} {
		if errors.Is(err, e) {
			words = append(words, name)
		}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		status := strings.ReplaceAll(strings.TrimSpace(b.rs.LastCmdStatus()), "\n", " | ")
		words = append(words, fmt.Sprintf("%s (%s)", errnoName(errno), status))
	}
	if words == nil {
		return "error " + err.Error()
	}
	return strings.Join(words, " ")
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.ENOSPC:
		return "ENOSPC"
	case syscall.EINVAL:
		return "EINVAL"
	case syscall.ENOENT:
		return "ENOENT"
	}
	return e.Error()
}

const (
	groupA = "0000000a-0000-4000-8000-000000000000"
	groupB = "0000000b-0000-4000-8000-000000000000"
	groupM = "0000000c-0000-4000-8000-000000000000"
	groupX = "0000000d-0000-4000-8000-000000000000"
)

// at is the group at path, as the script names it.
func at(t *testing.T, path string) resctrlfs.Addr {
	t.Helper()
	a, err := resctrlfs.ParseAddr(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func ensure(name, class string) func(*testing.T, *backend, map[string]int) string {
	return func(_ *testing.T, b *backend, _ map[string]int) string {
		return say(b, b.rs.Ensure(resctrlfs.Addr{Class: class, Name: name}))
	}
}

func remove(name, class string) func(*testing.T, *backend, map[string]int) string {
	return func(_ *testing.T, b *backend, _ map[string]int) string {
		return say(b, b.rs.Remove(resctrlfs.Addr{Class: class, Name: name}))
	}
}

// outsideMkdir is another process's mkdir of the group at path: not one this process made.
func outsideMkdir(path string) func(*testing.T, *backend, map[string]int) string {
	return func(t *testing.T, b *backend, _ map[string]int) string { return say(b, b.mkdir(t, path)) }
}

func assign(path, task string) func(*testing.T, *backend, map[string]int) string {
	return func(t *testing.T, b *backend, tids map[string]int) string {
		return say(b, b.rs.Assign(at(t, path), tids[task]))
	}
}

func writeTasks(path, task string) func(*testing.T, *backend, map[string]int) string {
	return func(t *testing.T, b *backend, tids map[string]int) string {
		return say(b, b.rs.WriteTasks(at(t, path), []int{tids[task]}, func(_ int, err error) error { return err }))
	}
}

// writeTasksCounted is writeTasks that also says how many results the write gave.
func writeTasksCounted(path string, names ...string) func(*testing.T, *backend, map[string]int) string {
	return func(t *testing.T, b *backend, tids map[string]int) string {
		var ids []int
		for _, n := range names {
			ids = append(ids, tids[n])
		}
		results := 0
		err := b.rs.WriteTasks(at(t, path), ids, func(_ int, err error) error { results++; return err })
		return fmt.Sprintf("%s, %d results", say(b, err), results)
	}
}

// tasks lists the script's tasks in the group at path, by name; "gone" for no group.
func tasks(path string) func(*testing.T, *backend, map[string]int) string {
	return func(t *testing.T, b *backend, tids map[string]int) string {
		in, ok := b.rs.Tasks(at(t, path))
		if !ok {
			return "gone"
		}
		if b.rs.Exists(at(t, path)) != ok {
			return "Exists and Tasks disagree"
		}
		var names []string
		for name, tid := range tids {
			if in[tid] {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		return "[" + strings.Join(names, " ") + "]"
	}
}

// TestConformGroups: RMIDs running out and freed by Remove, tasks moved and listed, the
// class boundary as the kernel and goresctrl keep it.
func TestConformGroups(t *testing.T) {
	t.Parallel()
	root := func(name string) string { return "mon_groups/" + name }
	class := func(name string) string { return "c/mon_groups/" + name }
	const classRefusal = "EINVAL (Can't move task to different control group)"
	script := []step{
		{"mkdir A", ensure(groupA, ""), "ok"},
		{"mkdir B", ensure(groupB, ""), "ok"},
		{"mkdir X with no RMID left", ensure(groupX, ""), "ErrNoRMID ENOSPC (Out of RMIDs)"},
		{"Ensure A again: adopted, no RMID taken", ensure(groupA, ""), "ok"},
		{"t1 into A", assign(root(groupA), "t1"), "ok"},
		{"t2 into A", assign(root(groupA), "t2"), "ok"},
		{"A's tasks", tasks(root(groupA)), "[t1 t2]"},
		{"t1 into B: moved", assign(root(groupB), "t1"), "ok"},
		{"A's tasks after the move", tasks(root(groupA)), "[t2]"},
		{"B's tasks", tasks(root(groupB)), "[t1]"},
		{"rmdir B", remove(groupB, ""), "ok"},
		{"B's tasks after rmdir", tasks(root(groupB)), "gone"},
		{"a tasks write to B after its rmdir", writeTasksCounted(root(groupB), "t1", "t2"), "ENOENT (ok), 0 results"},
		{"a tasks write of two to A", writeTasksCounted(root(groupA), "t1", "t2"), "ok, 2 results"},
		{"mkdir X in B's RMID", ensure(groupX, ""), "ok"},
		{"rmdir of a group that is not there", remove(groupM, ""), "ok"},
		{"rmdir X", remove(groupX, ""), "ok"},
		{"another process's mkdir of B", outsideMkdir(root(groupB)), "ok"},
		{"no RMID left", ensure(groupX, ""), "ErrNoRMID ENOSPC (Out of RMIDs)"},
		{"rmdir of B, made by the other process", remove(groupB, ""), "ok"},
		{"B after its rmdir", tasks(root(groupB)), "gone"},
		{"mkdir M in class c", ensure(groupM, "c"), "ok"},
		{"Ensure M in the root while it is c's", ensure(groupM, ""),
			`error key "` + groupM + `" already tracked under rdtClass "c", cannot reassign to ""`},
		{"a root task into c's M, by the tasks file", writeTasks(class(groupM), "t2"), classRefusal},
		{"A keeps t2 (and t1, written above)", tasks(root(groupA)), "[t1 t2]"},
		{"t3 into class c", func(t *testing.T, b *backend, tids map[string]int) string {
			b.class(t, tids["t3"], "c")
			return "ok"
		}, "ok"},
		{"t3 into the root's A through goresctrl", assign(root(groupA), "t3"), "ErrClassMismatch"},
		{"t3 into the root's A by the tasks file", writeTasks(root(groupA), "t3"), classRefusal},
		{"t3 into c's M", assign(class(groupM), "t3"), "ok"},
		{"M's tasks", tasks(class(groupM)), "[t3]"},
		{"rmdir M: t3 back in c's own group", remove(groupM, "c"), "ok"},
		{"t3 still of class c", assign(root(groupA), "t3"), "ErrClassMismatch"},
		{"rmdir A with t2 in it", remove(groupA, ""), "ok"},
		{"A after rmdir", tasks(root(groupA)), "gone"},
	}
	t.Run("fake", func(t *testing.T) {
		t.Parallel()
		run(t, fakeBackend(2, nil), script)
	})
	t.Run("simulator", func(t *testing.T) {
		t.Parallel()
		// The root's RMID, class c's, and two for monitoring groups.
		run(t, simBackend(t, resctrlsim.Options{NumRMIDs: 4}, "c"), script)
	})
}

// g is the monitoring group path of a counters script's group i.
func g(i int) string { return fmt.Sprintf("mon_groups/%08d-0000-4000-8000-000000000000", i) }

func gname(i int) string { return filepath.Base(g(i)) }

// addr is the i-th group of a counter script.
func addr(i int) resctrlfs.Addr { return resctrlfs.Addr{Name: gname(i)} }

// free is info/L3_MON as "<mode> counters <d>=<n>;... free <d>=<n>;...".
func free(_ *testing.T, b *backend, _ map[string]int) string {
	a, err := b.rs.Assignment()
	if err != nil {
		return say(b, err)
	}
	if !a.Counting() {
		return a.Mode
	}
	return a.Mode + " counters " + domains(a.Counters) + " free " + domains(a.Available)
}

func domains(m map[string]int) string {
	var parts []string
	for _, d := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, d+"="+strconv.Itoa(m[d]))
	}
	return strings.Join(parts, ";")
}

// held is a group's mbm_L3_assignments: "<domain>:<event>,<event> ..." for the events that
// hold a counter, "none" if none does.
func held(i int) func(*testing.T, *backend, map[string]int) string {
	return func(_ *testing.T, b *backend, _ map[string]int) string {
		ga, err := b.rs.GroupAssignment(addr(i))
		if err != nil {
			return say(b, err)
		}
		if !slices.Equal(ga.Events, []string{resctrlfs.MBMTotal, resctrlfs.MBMLocal}) {
			return fmt.Sprintf("events %v", ga.Events)
		}
		var parts []string
		for _, d := range slices.Sorted(maps.Keys(ga.Assigned)) {
			parts = append(parts, d+":"+strings.Join(ga.Assigned[d], ","))
		}
		if parts == nil {
			return "none"
		}
		return strings.Join(parts, " ")
	}
}

// unassigned lists the group's counters that read "Unassigned"; "none" if none does.
func unassigned(i int) func(*testing.T, *backend, map[string]int) string {
	return func(_ *testing.T, b *backend, _ map[string]int) string {
		_, missing, err := b.rs.Counters(addr(i))
		if err != nil {
			return say(b, err)
		}
		var out []string
		for _, m := range missing {
			if m.Reason == "Unassigned" {
				out = append(out, m.Domain+"/"+m.Name)
			}
		}
		if out == nil {
			return "none"
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
}

func writeAssign(i int, line string) func(*testing.T, *backend, map[string]int) string {
	return func(_ *testing.T, b *backend, _ map[string]int) string {
		return say(b, b.rs.WriteAssignment(addr(i), line))
	}
}

func mode(m string) func(*testing.T, *backend, map[string]int) string {
	return func(t *testing.T, b *backend, _ map[string]int) string { b.setMode(t, m); return "ok" }
}

// TestConformCounters: counter assignment in mbm_event mode on two L3 domains of 8 counters:
// what mkdir takes, writes that take and give back counters, the kernel's refusals and their
// words, counters that read Unassigned, the mode switched to default and back.
func TestConformCounters(t *testing.T) {
	t.Parallel()
	const both = "0:mbm_total_bytes,mbm_local_bytes 1:mbm_total_bytes,mbm_local_bytes"
	const allUnassigned = "mon_L3_00/mbm_local_bytes mon_L3_00/mbm_total_bytes mon_L3_01/mbm_local_bytes mon_L3_01/mbm_total_bytes"
	mkdirs := func(ids ...int) func(*testing.T, *backend, map[string]int) string {
		return func(t *testing.T, b *backend, tids map[string]int) string {
			var out []string
			for _, i := range ids {
				out = append(out, ensure(gname(i), "")(t, b, tids))
			}
			return strings.Join(out, " ")
		}
	}
	script := []step{
		{"at mount: the root group holds a counter of each event in each domain", free, "mbm_event counters 0=8;1=8 free 0=6;1=6"},
		{"mkdir 0, 1, 2", mkdirs(0, 1, 2), "ok ok ok"},
		{"counters after the mkdirs", free, "mbm_event counters 0=8;1=8 free 0=0;1=0"},
		{"group 0's assignments", held(0), both},
		{"group 0 counts", unassigned(0), "none"},
		{"mkdir 3 with no counter free", mkdirs(3), "ok"},
		{"group 3's assignments", held(3), "none"},
		{"group 3's bandwidth", unassigned(3), allUnassigned},
		{"assign with no counter free", writeAssign(3, "mbm_total_bytes:0=e"),
			"ENOSPC (Failed to allocate counter for mbm_total_bytes in domain 0 | Assign operation 'mbm_total_bytes:0=e' failed)"},
		{"group 0 gives back total in domain 0", writeAssign(0, "mbm_total_bytes:0=_"), "ok"},
		{"one free in domain 0", free, "mbm_event counters 0=8;1=8 free 0=1;1=0"},
		{"group 3 takes it", writeAssign(3, "mbm_total_bytes:0=e"), "ok"},
		{"group 3's assignments after", held(3), "0:mbm_total_bytes"},
		{"group 3 counts total in domain 0", unassigned(3),
			"mon_L3_00/mbm_local_bytes mon_L3_01/mbm_local_bytes mon_L3_01/mbm_total_bytes"},
		{"assigning what it holds is no change", writeAssign(3, "mbm_total_bytes:0=e"), "ok"},
		{"local in domain 0, none free", writeAssign(3, "mbm_local_bytes:0=e"),
			"ENOSPC (Failed to allocate counter for mbm_local_bytes in domain 0 | Assign operation 'mbm_local_bytes:0=e' failed)"},
		{"an unknown event", writeAssign(3, "bogus:0=e"), "ENOENT (Invalid event bogus)"},
		{"a domain that is not there", writeAssign(3, "mbm_total_bytes:7=e"), "EINVAL (Invalid domain id 7)"},
		{"a state that is neither e nor _", writeAssign(3, "mbm_total_bytes:1=x"), "EINVAL (Assign operation 'mbm_total_bytes:1=x' failed)"},
		{"rmdir 1 frees its counters", remove(gname(1), ""), "ok"},
		{"counters after rmdir", free, "mbm_event counters 0=8;1=8 free 0=2;1=2"},
		{"mkdir 4 takes them", mkdirs(4), "ok"},
		{"group 4's assignments", held(4), both},
		{"group 4 gives back local in every domain", writeAssign(4, "mbm_local_bytes:*=_"), "ok"},
		{"group 4's assignments after", held(4), "0:mbm_total_bytes 1:mbm_total_bytes"},
		{"one free in each domain", free, "mbm_event counters 0=8;1=8 free 0=1;1=1"},
		{"group 3 takes local in every domain", writeAssign(3, "mbm_local_bytes:*=e"), "ok"},
		{"group 3's assignments with local", held(3), "0:mbm_total_bytes,mbm_local_bytes 1:mbm_local_bytes"},
		{"total in every domain, none free in domain 1", writeAssign(3, "mbm_total_bytes:*=e"),
			"ENOSPC (Failed to allocate counter for mbm_total_bytes in domain 1 | Assign operation 'mbm_total_bytes:*=e' failed)"},
		{"a domain id that is not a number", writeAssign(3, "mbm_total_bytes:x=e"), "EINVAL (Missing domain id)"},
		{"switch to default", mode("default"), "ok"},
		{"in default mode", free, "default"},
		{"group 0's assignments in default mode", held(0), "EINVAL (mbm_event counter assignment mode is not enabled)"},
		{"an assignment in default mode", writeAssign(0, "mbm_total_bytes:0=e"), "EINVAL (mbm_event mode is not enabled)"},
		{"group 3 counts everything in default mode", unassigned(3), "none"},
		{"mkdir 5 in default mode", mkdirs(5), "ok"},
		{"back to mbm_event", mode("mbm_event"), "ok"},
		{"every counter free, the root's too", free, "mbm_event counters 0=8;1=8 free 0=8;1=8"},
		{"group 0 holds none", held(0), "none"},
		{"group 0 counts nothing", unassigned(0), allUnassigned},
		{"mkdir 6 takes counters again", mkdirs(6), "ok"},
		{"counters after mkdir 6", free, "mbm_event counters 0=8;1=8 free 0=6;1=6"},
		{"mbm_event written again", mode("mbm_event"), "ok"},
		{"nothing freed by writing the mode it is in", free, "mbm_event counters 0=8;1=8 free 0=6;1=6"},
		{"group 6 keeps its counters", held(6), both},
	}
	t.Run("fake", func(t *testing.T) {
		t.Parallel()
		b := fakeBackend(63, func(f *resctrlfake.Resctrl) {
			f.SetAssignMode(resctrlfs.AssignModeEvent, 2, 8)
			f.UseTree(resctrlfake.Tree(t, "l3"))
		})
		run(t, b, script)
	})
	t.Run("simulator", func(t *testing.T) {
		t.Parallel()
		run(t, simBackend(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 8, L3Domains: 2}), script)
	})
}

// limboCtl is what a limbo script does outside Groups: a test holding a group's occupancy, the
// limbo worker's pass, an administrator's write to max_threshold_occupancy.
type limboCtl struct {
	setOcc    func(path string, bytes uint64) // 0 clears it
	pass      func() int
	threshold func(bytes uint64)
}

func occupancy(path string, bytes uint64, c *limboCtl) func(*testing.T, *backend, map[string]int) string {
	return func(*testing.T, *backend, map[string]int) string { c.setOcc(path, bytes); return "ok" }
}

// llc is the group's highest llc_occupancy reading.
func llc(path string) func(*testing.T, *backend, map[string]int) string {
	return func(t *testing.T, b *backend, _ map[string]int) string {
		readings, _, err := b.rs.Counters(at(t, path))
		if err != nil {
			return say(b, err)
		}
		top := -1.0
		for _, r := range readings {
			if r.Name == "llc_occupancy" {
				top = max(top, r.Value)
			}
		}
		return strconv.FormatFloat(top, 'f', -1, 64)
	}
}

// TestConformLimbo: the kernel's RMID limbo (fs/resctrl/monitor.c) on the fake as on the
// simulator: an rmdir'd group's RMID is dirty until the worker's pass, EBUSY meanwhile and
// ENOSPC with limbo empty; a pass frees it only with its occupancy below the threshold, which
// an administrator may raise.
func TestConformLimbo(t *testing.T) {
	t.Parallel()
	root := func(name string) string { return "mon_groups/" + name }
	script := func(c *limboCtl) []step {
		pass := func(*testing.T, *backend, map[string]int) string { return fmt.Sprintf("freed %d", c.pass()) }
		const busy = "device or resource busy (Out of RMIDs)"
		return []step{
			{"limbo", func(_ *testing.T, b *backend, _ map[string]int) string {
				th, on, err := b.rs.(interface {
					LimboThreshold() (uint64, bool, error)
				}).LimboThreshold()
				return fmt.Sprintf("%d %v %v", th, on, err)
			}, "1048576 true <nil>"},
			{"mkdir A", ensure(groupA, ""), "ok"},
			{"mkdir B", ensure(groupB, ""), "ok"},
			{"mkdir X with every RMID used", ensure(groupX, ""), "ErrNoRMID ENOSPC (Out of RMIDs)"},
			{"A's lines held at 2 MiB", occupancy(root(groupA), 2<<20, c), "ok"},
			{"A's llc_occupancy", llc(root(groupA)), "2097152"},
			{"rmdir A", remove(groupA, ""), "ok"},
			{"mkdir X with A's RMID in limbo", ensure(groupX, ""), busy},
			{"a pass with A's lines above the threshold", pass, "freed 0"},
			{"mkdir X still", ensure(groupX, ""), busy},
			{"A's lines gone", occupancy(root(groupA), 0, c), "ok"},
			{"a pass", pass, "freed 1"},
			{"mkdir X in A's RMID", ensure(groupX, ""), "ok"},
			{"rmdir B, its occupancy nil", remove(groupB, ""), "ok"},
			{"mkdir A right after: limbo is unconditional", ensure(groupA, ""), busy},
			{"a pass", pass, "freed 1"},
			{"mkdir A in B's RMID", ensure(groupA, ""), "ok"},
			{"X's lines held at 4 MiB", occupancy(root(groupX), 4<<20, c), "ok"},
			{"rmdir X", remove(groupX, ""), "ok"},
			{"a pass", pass, "freed 0"},
			{"the threshold raised to 8 MiB", func(*testing.T, *backend, map[string]int) string { c.threshold(8 << 20); return "ok" }, "ok"},
			{"limbo after the write", func(_ *testing.T, b *backend, _ map[string]int) string {
				th, _, err := b.rs.(interface {
					LimboThreshold() (uint64, bool, error)
				}).LimboThreshold()
				return fmt.Sprintf("%d %v", th, err)
			}, "8388608 <nil>"},
			{"a pass under the raised threshold", pass, "freed 1"},
			{"mkdir B in X's RMID", ensure(groupB, ""), "ok"},
			{"mkdir X with every RMID used, limbo empty", ensure(groupX, ""), "ErrNoRMID ENOSPC (Out of RMIDs)"},
		}
	}
	t.Run("fake", func(t *testing.T) {
		t.Parallel()
		f := resctrlfake.New(2)
		l := resctrlfake.WithOccupancyLimbo(f)
		c := &limboCtl{
			setOcc: func(path string, bytes uint64) {
				if bytes == 0 {
					f.ClearOccupancy(path)
					return
				}
				f.SetOccupancy(path, bytes)
			},
			pass: l.Pass, threshold: l.SetThreshold}
		b := fakeBackend(2, nil)
		b.rs = l
		run(t, b, script(c))
	})
	t.Run("simulator", func(t *testing.T) {
		t.Parallel()
		// The root's RMID and two for monitoring groups; the worker's own passes an hour
		// apart, so only the script's run.
		o := resctrlsim.Options{NumRMIDs: 3, Limbo: true, LimboInterval: 1 << 62}
		sim := resctrlsim.MountT(t, o)
		k, err := lifecycle.OpenResctrl(kernel.Open, sim.Dir, resctrlfs.CheckSimulator, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		c := &limboCtl{
			setOcc: func(path string, bytes uint64) {
				if bytes == 0 {
					sim.ClearOccupancy(path)
					return
				}
				sim.SetOccupancy(path, bytes)
			},
			pass: sim.LimboPass,
			threshold: func(bytes uint64) {
				if err := os.WriteFile(filepath.Join(sim.Dir, "info/L3_MON/max_threshold_occupancy"), []byte(strconv.FormatUint(bytes, 10)+"\n"), 0); err != nil {
					t.Fatal(err)
				}
			}}
		run(t, &backend{rs: k}, script(c))
	})
}
