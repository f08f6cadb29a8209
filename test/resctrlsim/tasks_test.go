package resctrlsim_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestTasksWrites(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	d := sim.Dir
	a, b := filepath.Join(d, "mon_groups/a"), filepath.Join(d, "mon_groups/b")
	mustMkdir(t, a)
	mustMkdir(t, b)
	lastCmd := func() string { return strings.TrimSpace(read(t, filepath.Join(d, "info/last_cmd_status"))) }
	p := start(t, "sleep", "60").Process.Pid

	if err := write(a+"/tasks", itoa(p)+"\n"); err != nil {
		t.Fatal(err)
	}
	if !has(t, a+"/tasks", p) || has(t, filepath.Join(d, "tasks"), p) {
		t.Fatalf("after the write %d is not in a alone", p)
	}
	// A task is in one group at a time.
	if err := write(b+"/tasks", itoa(p)); err != nil {
		t.Fatal(err)
	}
	if has(t, a+"/tasks", p) || !has(t, b+"/tasks", p) {
		t.Fatalf("after moving to b, %d is still in a or not in b", p)
	}

	wantErrno(t, "a task that does not exist", write(a+"/tasks", "4194304"), syscall.ESRCH)
	if got := lastCmd(); got != "No task 4194304" {
		t.Errorf("last_cmd_status = %q", got)
	}
	for _, bad := range []string{"abc", "-3", "12abc", "\n", "1 2"} {
		wantErrno(t, fmt.Sprintf("garbage %q", bad), write(a+"/tasks", bad), syscall.EINVAL)
	}
	// One id per write(2) unless the kernel is told to take lists.
	wantErrno(t, "a list without TaskLists", write(a+"/tasks", itoa(p)+","+itoa(p)), syscall.EINVAL)

	// rmdir hands the group's tasks to its parent: the root.
	if err := syscall.Rmdir(b); err != nil {
		t.Fatal(err)
	}
	if !has(t, filepath.Join(d, "tasks"), p) {
		t.Errorf("after rmdir, %d is not back in the root group", p)
	}

	// Writing 0 moves the writer itself.
	sh := exec.Command("sh", "-c", "echo 0 > "+a+"/tasks && exec sleep 60")
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sh.Process.Kill(); _ = sh.Wait() })
	eventually(t, "the shell that wrote 0 to be in a", func() bool { return has(t, a+"/tasks", sh.Process.Pid) })

	// An exited task disappears.
	q := exec.Command("sleep", "60")
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	if err := write(a+"/tasks", itoa(q.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	_ = q.Process.Kill()
	_ = q.Wait()
	if has(t, a+"/tasks", q.Process.Pid) {
		t.Errorf("exited task %d still listed", q.Process.Pid)
	}
}

func TestTaskListsOption(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{TaskLists: true})
	g := filepath.Join(sim.Dir, "mon_groups/g")
	mustMkdir(t, g)
	p, q := start(t, "sleep", "60").Process.Pid, start(t, "sleep", "60").Process.Pid
	if err := write(g+"/tasks", itoa(p)+","+itoa(q)); err != nil {
		t.Fatal(err)
	}
	if !has(t, g+"/tasks", p) || !has(t, g+"/tasks", q) {
		t.Errorf("a list write did not move both tasks")
	}
	wantErrno(t, "a list with a missing task", write(g+"/tasks", "4194304,"+itoa(p)), syscall.ESRCH)
	if got := read(t, filepath.Join(sim.Dir, "info/last_cmd_status")); got != "No task 4194304\nError while processing task 4194304\n" {
		t.Errorf("last_cmd_status = %q", got)
	}
}

// A monitoring group only takes tasks of its own control group; moving a task into a control
// group moves it between classes.
func TestControlGroupBoundary(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	d := sim.Dir
	mustMkdir(t, filepath.Join(d, "c"))
	m := filepath.Join(d, "c/mon_groups/m")
	mustMkdir(t, m)
	p := start(t, "sleep", "60").Process.Pid
	wantErrno(t, "a root task into c's mon group", write(m+"/tasks", itoa(p)), syscall.EINVAL)
	if got := read(t, filepath.Join(d, "info/last_cmd_status")); got != "Can't move task to different control group\n" {
		t.Errorf("last_cmd_status = %q", got)
	}
	if err := write(filepath.Join(d, "c/tasks"), itoa(p)); err != nil {
		t.Fatal(err)
	}
	if err := write(m+"/tasks", itoa(p)); err != nil {
		t.Fatalf("a task of c into c's mon group: %v", err)
	}
	// The same holds the other way: a task in c cannot join the root's mon groups.
	mustMkdir(t, filepath.Join(d, "mon_groups/r"))
	wantErrno(t, "a task of c into the root's mon group", write(filepath.Join(d, "mon_groups/r/tasks"), itoa(p)), syscall.EINVAL)
	// rmdir of the mon group leaves the task in c; rmdir of c sends it to the root.
	if err := syscall.Rmdir(m); err != nil {
		t.Fatal(err)
	}
	if !has(t, filepath.Join(d, "c/tasks"), p) {
		t.Errorf("after rmdir of c's mon group the task is not in c")
	}
	if err := syscall.Rmdir(filepath.Join(d, "c")); err != nil {
		t.Fatal(err)
	}
	if !has(t, filepath.Join(d, "tasks"), p) {
		t.Errorf("after rmdir of c the task is not in the root")
	}
}

// TestForkRace shows the kernel's inheritance: what a process forks or spawns before it is
// moved stays behind, what it creates after it was moved follows it; moving the PID moves one
// thread only.
func TestForkRace(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	g := filepath.Join(sim.Dir, "mon_groups/pod")
	mustMkdir(t, g)

	f := startForker(t)
	before := f.do(t, "spawn") // a child and a thread made before any move
	beforeThread := f.do(t, "thread")
	existing := threads(t, f.pid)
	if err := write(g+"/tasks", itoa(f.pid)); err != nil {
		t.Fatal(err)
	}
	// Only the thread that was named moved. (Threads the Go runtime creates from now on
	// have an unknown creator, so only those that existed before the write are checked.)
	for _, tid := range existing {
		if in := has(t, g+"/tasks", tid); in != (tid == f.pid) {
			t.Errorf("thread %d in group: %v, want %v (only the written id moves)", tid, in, tid == f.pid)
		}
	}
	// Now every thread, as the createRuntime hook does.
	for _, tid := range threads(t, f.pid) {
		if err := write(g+"/tasks", itoa(tid)); err != nil {
			t.Fatal(err)
		}
	}
	after := f.do(t, "spawn")
	afterThread := f.do(t, "thread")
	grand := f.do(t, "spawn-sh") // a child that forks a grandchild

	in := func(id int) bool { return has(t, g+"/tasks", id) }
	if in(before) {
		t.Errorf("child %d spawned before the move is in the group", before)
	}
	if !in(beforeThread) {
		t.Errorf("thread %d made before the move was moved with every thread, but is not in the group", beforeThread)
	}
	if !in(after) || !in(afterThread) || !in(grand) {
		t.Errorf("made after the move: child %d in=%v, thread %d in=%v, grandchild %d in=%v",
			after, in(after), afterThread, in(afterThread), grand, in(grand))
	}
	root := filepath.Join(sim.Dir, "tasks")
	if !has(t, root, before) || has(t, root, after) {
		t.Errorf("root group: before-child listed %v (want true), after-child listed %v (want false)", has(t, root, before), has(t, root, after))
	}
}

// forker is a helper process (this test binary re-executed) that makes children and threads
// when told to, so the test knows exactly when each was created.
type forker struct {
	pid int
	in  *os.File
	out *bufio.Scanner
}

func startForker(t *testing.T) *forker {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "RESCTRLSIM_TEST_HELPER=forker")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	// A process group of its own, killed whole: the grandchild of "spawn-sh" has no
	// death signal, and outlived the test by ten minutes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	return &forker{pid: cmd.Process.Pid, in: stdin.(*os.File), out: bufio.NewScanner(stdout)}
}

func (f *forker) do(t *testing.T, what string) int {
	t.Helper()
	if _, err := fmt.Fprintln(f.in, what); err != nil {
		t.Fatal(err)
	}
	if !f.out.Scan() {
		t.Fatalf("forker: no answer to %s: %v", what, f.out.Err())
	}
	n, err := strconv.Atoi(f.out.Text())
	if err != nil {
		t.Fatalf("forker: %s answered %q", what, f.out.Text())
	}
	return n
}

// forkerMain serves startForker: "spawn" starts a sleeping child, "spawn-sh" a shell whose
// own child sleeps (answering the grandchild's pid), "thread" parks a goroutine on a new OS
// thread (answering its tid). The test kills them with the forker (its process group).
func forkerMain() {
	runtime.LockOSThread()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "spawn":
			c := exec.Command("sleep", "600")
			c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := c.Start(); err != nil {
				fmt.Println(-1)
				continue
			}
			fmt.Println(c.Process.Pid)
		case "spawn-sh":
			c := exec.Command("sh", "-c", "sleep 600 & echo $!; wait")
			c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			out, _ := c.StdoutPipe()
			if err := c.Start(); err != nil {
				fmt.Println(-1)
				continue
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			fmt.Println(strings.TrimSpace(line))
		case "thread":
			fmt.Println(newThread())
		}
	}
}

// newThread returns the tid of an OS thread created now. A goroutine locked to its thread
// keeps that thread for good, so locking goroutines until one reports a tid that did not
// exist before forces the runtime to create one.
func newThread() int {
	old := map[int]bool{}
	es, _ := os.ReadDir("/proc/self/task")
	for _, e := range es {
		n, _ := strconv.Atoi(e.Name())
		old[n] = true
	}
	for range 64 {
		tid := make(chan int)
		go func() {
			runtime.LockOSThread()
			tid <- unix.Gettid()
			select {}
		}()
		if n := <-tid; !old[n] {
			return n
		}
	}
	return -1
}
