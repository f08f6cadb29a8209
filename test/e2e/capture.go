package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e/capture"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// HostStages are the hook stages that run on the host, in the order a container meets them:
// every stage a hooks.d entry may name but startContainer, which runs inside the container,
// where the host's hook binary does not exist (the container would fail to start).
var HostStages = []string{"prestart", "createRuntime", "createContainer", "poststart", "poststop"}

// Capturer runs capturehook (built by the test: Bin) at each of Stages for every container it
// is given to (Hooks for runc and crun, HooksDir for podman and CRI-O), into a directory of its
// own (Dir). Each call is one capture.Record.
type Capturer struct {
	Bin    string
	Dir    string
	Stages []string
}

// NewCapturer makes the directory the records go to. With no stages it captures at
// createRuntime and poststop, what identity reads.
func NewCapturer(t testing.TB, bin string, stages ...string) *Capturer {
	t.Helper()
	if len(stages) == 0 {
		stages = []string{"createRuntime", "poststop"}
	}
	return &Capturer{Bin: bin, Dir: t.TempDir(), Stages: stages}
}

func (c *Capturer) hook(stage string) specs.Hook {
	return specs.Hook{Path: c.Bin, Args: []string{"capturehook", c.Dir, stage}}
}

// Hooks are bundle hooks for runc and crun.
func (c *Capturer) Hooks(t testing.TB) *specs.Hooks {
	t.Helper()
	h := &specs.Hooks{}
	for _, stage := range c.Stages {
		hook := c.hook(stage)
		switch stage {
		case "prestart":
			h.Prestart = append(h.Prestart, hook) //nolint:staticcheck // deprecated, but runtimes run it: what they do with it is worth capturing
		case "createRuntime":
			h.CreateRuntime = append(h.CreateRuntime, hook)
		case "createContainer":
			h.CreateContainer = append(h.CreateContainer, hook)
		case "startContainer":
			h.StartContainer = append(h.StartContainer, hook)
		case "poststart":
			h.Poststart = append(h.Poststart, hook)
		case "poststop":
			h.Poststop = append(h.Poststop, hook)
		default:
			t.Fatalf("e2e: no bundle hook stage %q", stage)
		}
	}
	return h
}

// HooksDir writes a hooks.d directory (podman --hooks-dir, CRI-O's hooks_dir) with one entry
// per stage, as a package would install them: when always. One entry per stage, so that each
// call says at which stage the entry was registered. The entries' names sort in the order of
// Stages: CRI-O was seen to run its prestart and createRuntime entries in the order of their
// file names, whatever their stages.
func (c *Capturer) HooksDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for i, stage := range c.Stages {
		entry := struct {
			Version string          `json:"version"`
			Hook    specs.Hook      `json:"hook"`
			When    map[string]bool `json:"when"`
			Stages  []string        `json:"stages"`
		}{"1.0.0", c.hook(stage), map[string]bool{"always": true}, []string{stage}}
		data, err := json.MarshalIndent(entry, "", "\t")
		if err != nil {
			t.Fatalf("e2e: encode hooks.d entry: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-capture-%s.json", i, stage)), data, 0o644); err != nil {
			t.Fatalf("e2e: write hooks.d entry: %v", err)
		}
	}
	return dir
}

// Calls returns the records so far, in the order the calls were made.
func (c *Capturer) Calls() ([]capture.Record, error) {
	return capture.Read(c.Dir)
}

// Wait returns the last record of container id at stage, waiting up to 10 seconds for one
// (podman may run poststop hooks from its cleanup process, after `podman rm` returned).
func (c *Capturer) Wait(id, stage string) (capture.Record, error) {
	var rec capture.Record
	err := poll.Until(10*time.Second, func() error {
		recs, err := c.Calls()
		if err != nil {
			return err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].ID == id && recs[i].Stage == stage {
				rec = recs[i]
				return nil
			}
		}
		return fmt.Errorf("no %s record of %s in %s", stage, id, c.Dir)
	})
	return rec, err
}
