package resctrlsim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func TestInjectedFailures(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	d := sim.Dir
	sim.FailNext(resctrlsim.OpMkdir, 2, syscall.ENOSPC)
	for i := range 2 {
		wantErrno(t, "injected mkdir failure", os.Mkdir(filepath.Join(d, "mon_groups/g"), 0o755), syscall.ENOSPC)
		if got := read(t, filepath.Join(d, "info/last_cmd_status")); got != "Out of RMIDs\n" {
			t.Errorf("mkdir failure %d: last_cmd_status = %q", i, got)
		}
	}
	mustMkdir(t, filepath.Join(d, "mon_groups/g"))

	p := start(t, "sleep", "60").Process.Pid
	sim.FailNext(resctrlsim.OpTasksWrite, 1, syscall.EIO)
	wantErrno(t, "injected tasks write failure", write(filepath.Join(d, "mon_groups/g/tasks"), itoa(p)), syscall.EIO)
	if got := read(t, filepath.Join(d, "info/last_cmd_status")); !strings.Contains(got, "tasks-write") {
		t.Errorf("last_cmd_status does not name the failed operation: %q", got)
	}
	if err := write(filepath.Join(d, "mon_groups/g/tasks"), itoa(p)); err != nil {
		t.Fatalf("the write after the injected failure: %v", err)
	}
	sim.FailNext(resctrlsim.OpTasksRead, 1, syscall.EIO)
	if _, err := os.ReadFile(filepath.Join(d, "mon_groups/g/tasks")); err == nil {
		t.Errorf("injected tasks read failure did not fail")
	}
	sim.FailNext(resctrlsim.OpRmdir, 1, syscall.EBUSY)
	wantErrno(t, "injected rmdir failure", syscall.Rmdir(filepath.Join(d, "mon_groups/g")), syscall.EBUSY)
	sim.FailNext(resctrlsim.OpCounterRead, 1, syscall.EIO)
	if _, err := os.ReadFile(filepath.Join(d, "mon_groups/g/mon_data/mon_L3_00/mbm_total_bytes")); err == nil {
		t.Errorf("injected counter read failure did not fail")
	}
	sim.ClearFaults()
	if err := syscall.Rmdir(filepath.Join(d, "mon_groups/g")); err != nil {
		t.Fatal(err)
	}
}

func TestCounterStates(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	d := sim.Dir
	mustMkdir(t, filepath.Join(d, "mon_groups/a"))
	mustMkdir(t, filepath.Join(d, "mon_groups/b"))
	sim.SetCounterState("mbm_total_bytes", "Unavailable", "mon_groups/a")
	sim.SetCounterState("*", "Error", "mon_groups/b")
	for path, want := range map[string]string{
		"mon_groups/a/mon_data/mon_L3_00/mbm_total_bytes": "Unavailable\n",
		"mon_groups/b/mon_data/mon_L3_00/llc_occupancy":   "Error\n",
	} {
		if got := read(t, filepath.Join(d, path)); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if got := read(t, filepath.Join(d, "mon_groups/a/mon_data/mon_L3_00/llc_occupancy")); got == "Unavailable\n" {
		t.Errorf("the state leaked to another counter")
	}
	sim.SetCounterState("mbm_total_bytes", "clear", "mon_groups/a")
	if got := read(t, filepath.Join(d, "mon_groups/a/mon_data/mon_L3_00/mbm_total_bytes")); got == "Unavailable\n" {
		t.Errorf("clear did not clear")
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	mustMkdir(t, filepath.Join(sim.Dir, "mon_groups/g"))
	sim.SetLatency(resctrlsim.OpTasksWrite, 300*time.Millisecond)
	began := time.Now()
	if err := write(filepath.Join(sim.Dir, "mon_groups/g/tasks"), itoa(os.Getpid())); err != nil {
		t.Fatal(err)
	}
	// A lower bound only: a sleep never ends early, however busy the machine.
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Errorf("tasks write took %s with 300ms of injected latency", took)
	}
}

func TestControlSocket(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{Debug: true})
	sock := filepath.Join(t.TempDir(), "ctl")
	stop, err := sim.ServeControl(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	if out, err := resctrlsim.Control(sock, "fail mkdir 1 EBUSY"); err != nil || out != "ok" {
		t.Fatalf("fail command: %q, %v", out, err)
	}
	wantErrno(t, "mkdir after a fail command", os.Mkdir(filepath.Join(sim.Dir, "mon_groups/g"), 0o755), syscall.EBUSY)
	mustMkdir(t, filepath.Join(sim.Dir, "mon_groups/g"))
	out, err := resctrlsim.Control(sock, "status")
	if err != nil {
		t.Fatal(err)
	}
	var st resctrlsim.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status is not JSON: %v: %s", err, out)
	}
	if len(st.Groups) != 2 || st.Groups[1].Path != "mon_groups/g" || st.Groups[1].RMID < 1 {
		t.Errorf("status groups = %+v", st.Groups)
	}
	if _, err := resctrlsim.Control(sock, "fail mkdir lots ENOSPC"); err == nil || !strings.Contains(err.Error(), "count") {
		t.Errorf("a bad command: %v", err)
	}
	if _, err := resctrlsim.Control(sock, "reset"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sim.Dir, "mon_groups/g")); !os.IsNotExist(err) {
		t.Errorf("group after reset: %v", err)
	}
}
