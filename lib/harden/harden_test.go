package harden

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The test binary is also the process under test (childEnv) and the prober (probeEnv).
const (
	childEnv = "HARDEN_TEST_CHILD" // "dumpable" or "non-dumpable"
	probeEnv = "HARDEN_TEST_PROBE" // the pid to probe
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	if pid := os.Getenv(probeEnv); pid != "" {
		os.Exit(probe(pid))
	}
	os.Exit(m.Run())
}

// child is a long-running process: made non-dumpable as the mains do, or left as it was;
// it says what PR_GET_DUMPABLE says, then waits for its stdin to close.
func child(mode string) int {
	if mode == "non-dumpable" {
		NonDumpable(os.Stderr)
	}
	d, err := Dumpable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Its own /proc/self stays readable: the kernel always lets a process read itself.
	if _, err := os.Readlink("/proc/self/root"); err != nil {
		fmt.Fprintln(os.Stderr, "own /proc/self/root:", err)
		return 1
	}
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		fmt.Fprintln(os.Stderr, "own /proc/self/fd:", err)
		return 1
	}
	fmt.Printf("ready dumpable=%t\n", d)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// probed is what another process reached of the child's /proc files ("" where it could).
type probed struct {
	Root, FdLink, FdOpen, Environ string
}

func probe(pid string) int {
	errText := func(err error) string {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	var p probed
	f, err := os.Open("/proc/" + pid + "/root/")
	if err == nil {
		_, err = f.Readdirnames(1)
		_ = f.Close()
	}
	p.Root = errText(err)
	_, err = os.Readlink("/proc/" + pid + "/fd/0")
	p.FdLink = errText(err)
	f, err = os.Open("/proc/" + pid + "/fd/1")
	if err == nil {
		_ = f.Close()
	}
	p.FdOpen = errText(err)
	_, err = os.ReadFile("/proc/" + pid + "/environ")
	p.Environ = errText(err)
	if err := json.NewEncoder(os.Stdout).Encode(p); err != nil {
		return 1
	}
	return 0
}

// capless runs the test binary as root with no capability at all (permitted, effective,
// inheritable, ambient and bounding sets empty): what a root pod with its capabilities
// dropped is.
func capless(t *testing.T, env string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--", self)
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	return cmd
}

// startChild starts the process under test, capless root, and waits until it is ready.
func startChild(t *testing.T, mode string) (pid int, dumpable string) {
	t.Helper()
	cmd := capless(t, childEnv+"="+mode)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s child: %v", mode, err)
	}
	d, ok := strings.CutPrefix(strings.TrimSpace(line), "ready dumpable=")
	if !ok {
		t.Fatalf("%s child said %q", mode, line)
	}
	return cmd.Process.Pid, d
}

func probeAs(t *testing.T, pid int) probed {
	t.Helper()
	out, err := capless(t, probeEnv+"="+strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	var p probed
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("probe said %q: %v", out, err)
	}
	return p
}

// A root process with no capabilities (a hostPID pod's, its capabilities dropped) reaches a
// dumpable root process's root directory and open files through /proc; made non-dumpable,
// it reaches none of them, while the process still reads its own /proc/self.
func TestNonDumpableRefusesCaplessRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the processes under test and the prober run as root without capabilities")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	open, d := startChild(t, "dumpable")
	if d != "true" {
		t.Fatalf("a process left as it was says dumpable=%s", d)
	}
	if p := probeAs(t, open); p != (probed{}) {
		// Without this the refusal below would prove nothing.
		t.Fatalf("the capless prober cannot reach even a dumpable process: %+v", p)
	}
	closed, d := startChild(t, "non-dumpable")
	if d != "false" {
		t.Fatalf("after NonDumpable, PR_GET_DUMPABLE says dumpable=%s", d)
	}
	p := probeAs(t, closed)
	for name, got := range map[string]string{"/proc/<pid>/root": p.Root, "/proc/<pid>/fd/0 (readlink)": p.FdLink,
		"/proc/<pid>/fd/1 (open)": p.FdOpen, "/proc/<pid>/environ": p.Environ} {
		if !strings.Contains(got, "permission denied") && !strings.Contains(got, "operation not permitted") {
			t.Errorf("%s of a non-dumpable process from capless root: %q, want a refusal", name, got)
		}
	}
}

func TestDumpable(t *testing.T) {
	t.Parallel()
	d, err := Dumpable()
	if err != nil {
		t.Fatal(err)
	}
	if !d {
		t.Errorf("the test binary itself is not dumpable")
	}
}
