package runtimes

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
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
	// intel_rdt without a closID (only enableMonitoring here): runc put the container in a
	// class named by its id.
	noClos := []byte(`{"id":"c2","init_process_pid":42,"config":{"intel_rdt":{"enableMonitoring":true}}}`)
	if c, _, _, err := parseRunc(noClos); err != nil || c.ClosID != "c2" {
		t.Errorf("intel_rdt without closID: class %q, %v; want the container's id", c.ClosID, err)
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

// parsedSanely checks what every runtime's state parser promises: an error is never a live
// container, and a live one has a pid and an ID that is safe as a path. It reports whether
// the parser gave a container to check further (no error).
func parsedSanely(t *testing.T, c Container, ok bool, err error) bool {
	t.Helper()
	if err != nil {
		if ok {
			t.Fatalf("ok with an error: %v", err)
		}
		return false
	}
	if ok && (c.Pid <= 0 || !ocistate.ValidContainerID(c.ID)) {
		t.Errorf("live with pid %d, id %q", c.Pid, c.ID)
	}
	return true
}

// FuzzParseRunc: whatever parseRunc calls live names a real pid and a safe id, every
// annotation comes from a "key=value" label (never "bundle"), and the container survives
// being written back as runc would write it.
func FuzzParseRunc(f *testing.F) {
	f.Add([]byte(`{"id":"c1","init_process_pid":42,"config":{"labels":["bundle=/b"]}}`))
	f.Add([]byte(`{"id":"c1","init_process_pid":42,"init_process_start":7,"config":{"labels":["bundle=/b","a=2","=x","y=","nolabel","a=b=c"],` +
		`"intel_rdt":{"closID":"gold"},"cgroups":{"path":"/k8s/c1"}}}`))
	f.Add([]byte(`{"id":"../x","init_process_pid":1}`))
	f.Add([]byte(`{"id":"c1","init_process_pid":-1}`))
	f.Add([]byte(`{"id":"c1","init_process_pid":"1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, start, ok, err := parseRunc(b)
		if !parsedSanely(t, c, ok, err) {
			return
		}
		if c.Runtime != "runc" || c.Annotations == nil {
			t.Errorf("runtime %q, annotations %v", c.Runtime, c.Annotations)
		}
		// The fields by their names in state.json, decoded without runc's types.
		var in struct {
			ID     string `json:"id"`
			Pid    int    `json:"init_process_pid"`
			Start  uint64 `json:"init_process_start"`
			Config struct {
				Labels   []string `json:"labels"`
				IntelRdt *struct {
					ClosID string `json:"closID"`
				} `json:"intel_rdt"`
				Cgroups *struct {
					Path string `json:"path"`
				} `json:"cgroups"`
			} `json:"config"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatalf("parseRunc accepted what a plain decode refuses: %v", err)
		}
		var closID, cgroupsPath string
		if in.Config.IntelRdt != nil {
			closID = ocistate.Class(&specs.LinuxIntelRdt{ClosID: in.Config.IntelRdt.ClosID}, in.ID)
		}
		if in.Config.Cgroups != nil {
			cgroupsPath = in.Config.Cgroups.Path
		}
		if c.ID != in.ID || c.Pid != in.Pid || start != in.Start || c.ClosID != closID || c.CgroupsPath != cgroupsPath {
			t.Errorf("parsed %+v start %d; state.json says %+v", c, start, in)
		}
		if len(c.Annotations) > len(in.Config.Labels) {
			t.Errorf("%d annotations from %d labels", len(c.Annotations), len(in.Config.Labels))
		}
		if _, ok := c.Annotations["bundle"]; ok {
			t.Errorf("the bundle label became an annotation")
		}
		for k, v := range c.Annotations {
			if !slices.Contains(in.Config.Labels, k+"="+v) {
				t.Errorf("annotation %q=%q is no label of %q", k, v, in.Config.Labels)
			}
		}
		again, start2, ok2, err := parseRunc(runcState(t, c, start))
		if err != nil || ok2 != ok || start2 != start || !reflect.DeepEqual(again, c) {
			t.Errorf("round trip:\n got %+v %d %v %v\nwant %+v %d %v", again, start2, ok2, err, c, start, ok)
		}
	})
}

// runcState writes c as runc keeps it in state.json, through runc's own types.
func runcState(t *testing.T, c Container, start uint64) []byte {
	t.Helper()
	st := libcontainer.State{BaseState: libcontainer.BaseState{ID: c.ID, InitProcessPid: c.Pid, InitProcessStartTime: start}}
	st.Config.Labels = []string{"bundle=" + c.Bundle}
	for _, k := range slices.Sorted(maps.Keys(c.Annotations)) {
		st.Config.Labels = append(st.Config.Labels, k+"="+c.Annotations[k])
	}
	if c.ClosID != "" {
		st.Config.IntelRdt = &configs.IntelRdt{ClosID: c.ClosID}
	}
	if c.CgroupsPath != "" {
		// Through JSON: naming runc's cgroup type would make its module a direct dependency.
		path, _ := json.Marshal(map[string]string{"path": c.CgroupsPath})
		if err := json.Unmarshal(path, &st.Config.Cgroups); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// crunStatus181 is the status crun 1.8.1 wrote for a container created with
// `crun --root /tmp/truth-crun/root create truthc1` (the paths of its stdout and stderr
// shortened).
const crunStatus181 = `{
    "pid": 5189,
    "process-start-time": 231240,
    "cgroup-path": "/truthc1",
    "scope": "",
    "rootfs": "rootfs",
    "systemd-cgroup": false,
    "bundle": "/tmp/truth-crun/b",
    "created": "2026-12-02T23:28:46.056958Z",
    "owner": "root",
    "detached": true,
    "external_descriptors": "[\"/dev/null\",\"/tmp/out\",\"/tmp/err\"]"
}`

func TestParseCrun(t *testing.T) {
	t.Parallel()
	c, start, ok, err := parseCrun("truthc1", []byte(crunStatus181))
	want := Container{ID: "truthc1", Runtime: "crun", Pid: 5189, Bundle: "/tmp/truth-crun/b", CgroupsPath: "/truthc1"}
	if err != nil || !ok || start != 231240 || !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v %d %v %v, want %+v", c, start, ok, err, want)
	}
	for name, tc := range map[string]struct {
		id, status string
		err        bool
	}{
		"no pid":       {"c", `{"process-start-time":1}`, false},
		"negative pid": {"c", `{"pid":-3}`, false},
		"bad id":       {"../c", `{"pid":3}`, false},
		"pid a string": {"c", `{"pid":"3"}`, true},
		"pid a float":  {"c", `{"pid":3.5}`, true},
		"start < 0":    {"c", `{"pid":3,"process-start-time":-1}`, true},
		"truncated":    {"c", `{"pid":3`, true},
	} {
		_, _, ok, err := parseCrun(tc.id, []byte(tc.status))
		if ok || (err != nil) != tc.err {
			t.Errorf("%s: ok %v, err %v (want an error: %v)", name, ok, err, tc.err)
		}
	}
}

// FuzzParseCrunStatus: whatever parseCrun calls live has a real pid and a safe id, the
// container is the one named (the status does not name it), and what parses survives being
// written back in crun's form. (TestParseCrun holds what crun really writes, and that a field
// of the wrong type is an error rather than a zero.)
func FuzzParseCrunStatus(f *testing.F) {
	f.Add("c1", []byte(crunStatus181))
	f.Add("c1", []byte(`{"pid":1,"process-start-time":2,"bundle":"/b","cgroup-path":"/x"}`))
	f.Add("c1", []byte(`{"pid":-1}`))
	f.Add("..", []byte(`{"pid":1}`))
	f.Add("c1", []byte(`{"pid":1e3}`))
	f.Add("c1", []byte(`null`))
	f.Fuzz(func(t *testing.T, id string, b []byte) {
		c, start, ok, err := parseCrun(id, b)
		if !parsedSanely(t, c, ok, err) {
			return
		}
		if c.ID != id || c.Runtime != "crun" || c.Annotations != nil || c.ClosID != "" {
			t.Errorf("id %q from %q, runtime %q; the status has no annotations or class: %+v", c.ID, id, c.Runtime, c)
		}
		out, err := json.Marshal(crunStatus{Pid: c.Pid, StartTime: start, CgroupPath: c.CgroupsPath, Bundle: c.Bundle})
		if err != nil {
			t.Fatal(err)
		}
		again, start2, ok2, err := parseCrun(id, out)
		if err != nil || ok2 != ok || start2 != start || !reflect.DeepEqual(again, c) {
			t.Errorf("round trip of %s:\n got %+v %d %v %v\nwant %+v %d %v", out, again, start2, ok2, err, c, start, ok)
		}
	})
}
