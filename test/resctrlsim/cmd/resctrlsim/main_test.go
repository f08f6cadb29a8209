package main_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// build compiles the command once per test binary run.
func build(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 && os.Getenv("RESCTRLSIM_REQUIRE") != "1" {
		t.Skip("the simulator needs root")
	}
	bin := filepath.Join(t.TempDir(), "resctrlsim")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func mounted(t *testing.T, dir string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// startMount runs `resctrlsim mount` and waits for it to say it is mounted.
func startMount(t *testing.T, bin, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string{"mount"}, args...), dir)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "mounted on") {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd
		}
		t.Log(sc.Text())
	}
	_ = cmd.Wait()
	t.Fatalf("resctrlsim mount exited before mounting")
	return nil
}

func TestMountServesAndUnmountsOnSignal(t *testing.T) {
	bin := build(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		dir := t.TempDir()
		sock := filepath.Join(t.TempDir(), "ctl")
		cmd := startMount(t, bin, dir, "--rmids", "3", "--ctl-socket", sock, "--mbm-assign", "mbm_event", "--mbm-counters", "4")
		for file, want := range map[string]string{
			"info/L3_MON/num_rmids":       "3\n",
			"info/L3_MON/mbm_assign_mode": "[mbm_event]\ndefault\n",
			"info/L3_MON/num_mbm_cntrs":   "0=4\n",
		} {
			if got, _ := os.ReadFile(filepath.Join(dir, file)); string(got) != want {
				t.Errorf("%s = %q, want %q", file, got, want)
			}
		}
		if out, err := exec.Command(bin, "ctl", "--socket", sock, "fail", "mkdir", "1", "ENOSPC").CombinedOutput(); err != nil {
			t.Fatalf("ctl: %v: %s", err, out)
		}
		if err := os.Mkdir(filepath.Join(dir, "mon_groups/g"), 0o755); err == nil {
			t.Errorf("mkdir after ctl fail succeeded")
		}
		out, err := exec.Command(bin, "ctl", "--socket", sock, "fail", "mkdir", "zero", "ENOSPC").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "count") {
			t.Errorf("a bad ctl command: %v: %s", err, out)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("after %s: %v", sig, err)
		}
		if mounted(t, dir) {
			t.Errorf("%s is still mounted after %s", dir, sig)
		}
	}
}

// Unmounted from outside (umount, fusermount -u), the command ends at once, and cleanly.
func TestUnmountedFromOutside(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	cmd := startMount(t, bin, dir)
	if err := syscall.Unmount(dir, 0); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after an outside unmount: %v", err)
		}
	case <-time.After(3 * time.Second):
		_ = cmd.Process.Kill()
		t.Errorf("still running 3s after its mount was taken away")
	}
}

// A simulator killed with SIGKILL leaves a dead mount; the next one clears it.
func TestStaleMountIsCleared(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	cmd := startMount(t, bin, dir)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "tasks")); err == nil {
		t.Fatalf("the killed simulator still answers")
	}
	cmd = startMount(t, bin, dir)
	if _, err := os.Stat(filepath.Join(dir, "tasks")); err != nil {
		t.Errorf("the new simulator does not answer: %v", err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for mounted(t, dir) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if mounted(t, dir) {
		t.Errorf("%s still mounted", dir)
	}
}

func TestClearErrors(t *testing.T) {
	bin := build(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no dir":          {[]string{"mount"}, "want exactly one DIR"},
		"bad rmids":       {[]string{"mount", "--rmids", "-1", t.TempDir()}, "num_rmids -1"},
		"missing dir":     {[]string{"mount", "/nonexistent/x"}, "/nonexistent/x"},
		"bad mbm-assign":  {[]string{"mount", "--mbm-assign", "abmc", t.TempDir()}, `mbm assign "abmc"`},
		"lone counters":   {[]string{"mount", "--mbm-counters", "8", t.TempDir()}, "mbm counters 8: only with"},
		"ctl no socket":   {[]string{"ctl", "--socket", "/nonexistent/s", "status"}, "control socket"},
		"ctl bad command": {[]string{"ctl", "--socket", "/nonexistent/s", "explode"}, "unknown command"},
	} {
		out, err := exec.Command(bin, tc.args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: %v: %q, want an error containing %q", name, err, out, tc.want)
		}
	}
	// Without root the simulator says what it needs instead of failing somewhere deep.
	if _, err := exec.LookPath("setpriv"); err == nil {
		out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin, "mount", t.TempDir()).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "needs root") {
			t.Errorf("as nobody: %v: %q", err, out)
		}
	}
}
