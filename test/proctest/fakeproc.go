package proctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// FakeProc is a procfs tree of a test's own, for cgroup.Host{Proc: Dir}: it holds
// <pid>/cgroup for the processes the test puts in it, and nothing else. Without root a test
// cannot make a cgroup (Hold), but what finds a container's processes by their cgroups reads
// them through cgroup.Host: on a FakeProc a test says which cgroup each of its processes is
// in, and real processes (plain sleeps) stand for a container's tasks. Everything else about
// a process (its threads, its start time, whether it runs) is still read from the real /proc.
//
// An entry is a process's, standing for its one thread: as /proc lists processes, not
// threads, and a multi-threaded process would need its threads' entries unlisted, which a
// directory cannot do, Put refuses a process with more than one thread. Entries are written
// whole (a rename), so a reader never sees half of one.
type FakeProc struct {
	Dir string
	own []byte // the test process's own /proc/self/cgroup: where its children are
}

// fakeSeq numbers the fake cgroups of one test binary.
var fakeSeq atomic.Int64

// NewFakeProc is an empty FakeProc in a directory of the test's.
func NewFakeProc(t testing.TB) *FakeProc {
	t.Helper()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	return &FakeProc{Dir: t.TempDir(), own: own}
}

// Put makes /proc/<pid>/cgroup say text ("hierarchy-ID:controllers:path" lines, as the
// kernel writes them). pid must be a running, single-threaded process.
func (f *FakeProc) Put(t testing.TB, pid int, text []byte) {
	t.Helper()
	tids, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		t.Fatalf("fake /proc: pid %d: %v", pid, err)
	}
	if len(tids) != 1 {
		t.Fatalf("fake /proc: pid %d has %d threads; an entry stands for one", pid, len(tids))
	}
	dir := filepath.Join(f.Dir, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sysfile.WriteAtomic(filepath.Join(dir, "cgroup"), text); err != nil {
		t.Fatal(err)
	}
}

// Inherit puts pid, a child the test started without a cgroup of its own, where the test
// process is, as the real /proc shows a child that inherited its parent's cgroups.
func (f *FakeProc) Inherit(t testing.TB, pid int) { t.Helper(); f.Put(t, pid, f.own) }

// Forget takes pid out, as /proc loses a process that was reaped.
func (f *FakeProc) Forget(pid int) { _ = os.RemoveAll(filepath.Join(f.Dir, strconv.Itoa(pid))) }

// members lists the pids whose entry says text, lowest first.
func (f *FakeProc) members(text []byte) []int {
	es, _ := os.ReadDir(f.Dir)
	var out []int
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(f.Dir, e.Name(), "cgroup")); err == nil && bytes.Equal(b, text) {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// FakeInit is Init on a FakeProc: a container's init, and the children it forked, in a
// cgroup of their own that exists only in the FakeProc. Its processes are plain sleeps,
// none waits to be released.
type FakeInit struct {
	Pid int
	// Cgroup is the cgroup's path, as /proc/<pid>/cgroup shows it (cgroup v2, "0::<path>")
	// and as a spec's linux.cgroupsPath names it.
	Cgroup string
	proc   *FakeProc
	text   []byte
	cmds   []*exec.Cmd
}

// Hold starts an init and children more processes (sleep, each) and puts them all in a new
// cgroup of f, as a container whose init forked children. They are killed, and taken out of
// f, when the test ends.
func (f *FakeProc) Hold(t testing.TB, children int) *FakeInit {
	t.Helper()
	cg := fmt.Sprintf("/resctrl-mon-fake-%d-%d", os.Getpid(), fakeSeq.Add(1))
	in := &FakeInit{Cgroup: cg, proc: f, text: []byte("0::" + cg + "\n")}
	t.Cleanup(in.Kill)
	for range children + 1 {
		cmd := exec.Command("sleep", "600")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		in.cmds = append(in.cmds, cmd)
		f.Put(t, cmd.Process.Pid, in.text)
	}
	in.Pid = in.cmds[0].Process.Pid
	return in
}

// Tasks lists every task in the init's cgroup, as the FakeProc says (a process's entry is
// its one thread's).
func (in *FakeInit) Tasks(t testing.TB) []int { t.Helper(); return in.proc.members(in.text) }

// Join moves pid into the init's cgroup, as a write of pid to its cgroup.procs does.
func (in *FakeInit) Join(t testing.TB, pid int) { t.Helper(); in.proc.Put(t, pid, in.text) }

// Kill ends every process of the init's cgroup and takes them out of the FakeProc; those
// it started are reaped.
func (in *FakeInit) Kill() {
	for _, pid := range in.proc.members(in.text) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		in.proc.Forget(pid)
	}
	for _, cmd := range in.cmds { // also those joined elsewhere since
		_ = cmd.Process.Kill()
		in.proc.Forget(cmd.Process.Pid) // before its pid can be reused
		_ = cmd.Wait()
	}
}
