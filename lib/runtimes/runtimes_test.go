package runtimes

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
)

func TestParseRunc(t *testing.T) {
	t.Parallel()
	b := []byte(`{"id":"c1","init_process_pid":42,"init_process_start":1234,"created":"2026-01-01T00:00:00Z",
	  "config":{"labels":["bundle=/b/c1","io.kubernetes.pod.uid=x","weird"],"intel_rdt":{"closID":"gold"},"cgroups":{"path":"/k8s/c1"}}}`)
	c, start, ok, err := parseRunc(b)
	if err != nil || !ok || start != 1234 || c.Pid != 42 || c.Bundle != "/b/c1" || c.Annotations["io.kubernetes.pod.uid"] != "x" ||
		c.ClosID != "gold" || c.CgroupsPath != "/k8s/c1" {
		t.Errorf("got %+v %d %v %v", c, start, ok, err)
	}
	if _, _, ok, _ := parseRunc([]byte(`{"id":"../x","init_process_pid":1}`)); ok {
		t.Errorf("a bad id was accepted")
	}
	if _, _, _, err := parseRunc([]byte(`{`)); err == nil {
		t.Errorf("truncated state accepted")
	}
}

// Live finds a container whose init is alive with its recorded start time, and not one
// whose pid is dead or reused.
func TestLive(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	st, err := procfs.ReadStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write := func(id string, pid int, start uint64) {
		dir := filepath.Join(root, id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]any{"id": id, "init_process_pid": pid, "init_process_start": start,
			"config": map[string]any{"labels": []string{"a=b"}}})
		if err := os.WriteFile(filepath.Join(dir, "state.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("alive", cmd.Process.Pid, st.StartTime)
	write("reused", cmd.Process.Pid, st.StartTime+1)
	write("dead", 1<<30, 1)
	cs, err := Live([]string{root, filepath.Join(t.TempDir(), "missing"), "/nonexistent/*"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].ID != "alive" || cs[0].Annotations["a"] != "b" {
		t.Errorf("live: %+v", cs)
	}
}

func FuzzParseRunc(f *testing.F) {
	f.Add([]byte(`{"id":"c1","init_process_pid":42,"config":{"labels":["bundle=/b"]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, _, ok, err := parseRunc(b)
		if err == nil && ok && (c.Pid <= 0 || c.ID == "") {
			t.Errorf("accepted %+v", c)
		}
	})
}

func FuzzParseCrunStatus(f *testing.F) {
	f.Add([]byte(`{"pid":1,"process-start-time":2,"bundle":"/b","cgroup-path":"/x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseCrunStatus(b)
	})
}
