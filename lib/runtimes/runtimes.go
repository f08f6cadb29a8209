// Package runtimes finds the containers that are alive on this host without asking any
// daemon: from the state the OCI runtimes themselves keep (runc's state.json, which
// containerd's shims use too, and crun's status). A runtime crash or a lost event cannot hide
// a container from it, and it needs no socket of any daemon.
package runtimes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/opencontainers/runc/libcontainer"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
)

// Container is one live container.
type Container = container.Container

// maxStateSize bounds a runtime's state file: they are a few KB.
const maxStateSize = 8 << 20

// Live lists the live containers under roots (config key runtimeRoots; a root may be a
// glob: containerd has one runc root per namespace). A container whose init has exited, or whose
// pid now belongs to another process (compared by start time), is not live. Unreadable
// entries are reported and skipped; the others are still returned.
func Live(roots []string) ([]Container, error) {
	var out []Container
	var errs []error
	for _, pattern := range roots {
		dirs, err := filepath.Glob(pattern)
		if err != nil {
			errs = append(errs, fmt.Errorf("runtime root %q: %w", pattern, err))
			continue
		}
		for _, root := range dirs {
			cs, err := scanRoot(root)
			out = append(out, cs...)
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

func scanRoot(root string) ([]Container, error) {
	es, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runtime root %s: %w", root, err)
	}
	var out []Container
	var errs []error
	for _, e := range es {
		if !e.IsDir() || !ocistate.ValidContainerID(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		var c Container
		var start uint64
		var ok bool
		switch {
		case exists(filepath.Join(dir, "state.json")):
			c, start, ok, err = readRunc(dir)
		case exists(filepath.Join(dir, "status")):
			c, start, ok, err = readCrun(dir)
		default:
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok && procfs.SameProcess(c.Pid, start) {
			out = append(out, c)
		}
	}
	return out, errors.Join(errs...)
}

// readRunc reads runc's state.json.
func readRunc(dir string) (Container, uint64, bool, error) {
	b, err := readFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return Container{}, 0, false, err
	}
	return parseRunc(b)
}

// parseRunc parses runc's state.json with runc's own types. The spec's annotations are kept
// there as "key=value" labels, next to "bundle=<path>".
func parseRunc(b []byte) (Container, uint64, bool, error) {
	var st libcontainer.State
	if err := json.Unmarshal(b, &st); err != nil {
		return Container{}, 0, false, fmt.Errorf("runc state: %w", err)
	}
	c := Container{ID: st.ID, Runtime: "runc", Pid: st.InitProcessPid, Annotations: map[string]string{}}
	for _, l := range st.Config.Labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		if k == "bundle" {
			c.Bundle = v
			continue
		}
		c.Annotations[k] = v
	}
	if r := st.Config.IntelRdt; r != nil {
		c.ClosID = ocistate.Class(&specs.LinuxIntelRdt{ClosID: r.ClosID, Schemata: r.Schemata, L3CacheSchema: r.L3CacheSchema,
			MemBwSchema: r.MemBwSchema, EnableMonitoring: r.EnableMonitoring}, st.ID)
	}
	if st.Config.Cgroups != nil {
		c.CgroupsPath = st.Config.Cgroups.Path
	}
	ok := ocistate.ValidContainerID(st.ID) && st.InitProcessPid > 0
	return c, st.InitProcessStartTime, ok, nil
}

// crunStatus is crun's <root>/<id>/status; crun keeps the container's config.json beside it.
type crunStatus struct {
	Pid        int    `json:"pid"`
	StartTime  uint64 `json:"process-start-time"`
	CgroupPath string `json:"cgroup-path"`
	Bundle     string `json:"bundle"`
}

func readCrun(dir string) (Container, uint64, bool, error) {
	b, err := readFile(filepath.Join(dir, "status"))
	if err != nil {
		return Container{}, 0, false, err
	}
	c, start, ok, err := parseCrun(filepath.Base(dir), b)
	if err != nil {
		return Container{}, 0, false, fmt.Errorf("%s: %w", dir, err)
	}
	spec, err := ocistate.ReadSpec(dir)
	if err != nil {
		return Container{}, 0, false, fmt.Errorf("crun container %s: %w", c.ID, err)
	}
	c.Annotations = spec.Annotations
	c.ClosID = ocistate.Class(ocistate.IntelRdt(spec), c.ID)
	return c, start, ok, nil
}

// parseCrun parses crun's status of the container id (crun names the directory by it; the
// status does not repeat it). The annotations and class are in the config.json beside it.
func parseCrun(id string, b []byte) (Container, uint64, bool, error) {
	st, err := parseCrunStatus(b)
	if err != nil {
		return Container{}, 0, false, err
	}
	c := Container{ID: id, Runtime: "crun", Pid: st.Pid, Bundle: st.Bundle, CgroupsPath: st.CgroupPath}
	return c, st.StartTime, ocistate.ValidContainerID(id) && st.Pid > 0, nil
}

func parseCrunStatus(b []byte) (crunStatus, error) {
	var st crunStatus
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("crun status: %w", err)
	}
	return st, nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("runtime state: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateSize+1))
	if err != nil {
		return nil, fmt.Errorf("runtime state %s: %w", path, err)
	}
	if len(b) > maxStateSize {
		return nil, fmt.Errorf("runtime state %s: larger than %d bytes", path, maxStateSize)
	}
	return b, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
