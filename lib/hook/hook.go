// Package hook is the OCI hook's whole behaviour behind its thin main: read the state, place
// or release the container, write one log line, and choose the exit code. A failing
// createRuntime hook stops the container from starting, so only the fail-closed policy ever
// makes it fail; a poststop hook never fails (runtimes only warn about it anyway).
package hook

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/intel/goresctrl/pkg/monitor"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/logging"
	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
)

// Stages, spelt as in the OCI runtime spec.
const (
	CreateRuntime = "createRuntime"
	Poststop      = "poststop"
)

// Run handles one hook call and returns the process's exit code. cfgErr is a failure to
// load the configuration: it is reported like any other failure, under the policy that could
// be determined (fail-open unless the loaded part says closed).
func Run(stage string, stdin io.Reader, stderr io.Writer, cfg config.Config, cfgErr error) int {
	start := time.Now()
	log, closer, err := logging.Open(cfg.Log, "resctrl-mon-hook", filepath.Join(cfg.StateDir, "hook.log"))
	if err != nil {
		fmt.Fprintf(stderr, "resctrl-mon-hook: %v\n", err)
		log, closer = slog.New(slog.NewTextHandler(stderr, nil)), io.NopCloser(nil)
	}
	defer closer.Close()
	// goresctrl logs through a process-wide logger; a hook is one process per call.
	monitor.SetLogger(logging.AtLeast(log.With("lib", "goresctrl"), slog.LevelWarn))

	// Read stdin to EOF first, whatever happens next: a runtime may fail writing to a hook
	// that stopped reading.
	st, err := ocistate.ReadState(stdin)
	out := lifecycle.Outcome{Container: st.ID}
	if err == nil {
		err = cfgErr
	}
	if err == nil {
		out, err = handle(stage, st, cfg, log)
	}
	attrs := []any{"stage", stage, "container", out.Container, "pod", out.Pod, "group", out.Group,
		"outcome", outcome(out, err), "threads", out.Threads, "duration", time.Since(start).Round(time.Microsecond)}
	if out.Detail != "" {
		attrs = append(attrs, "detail", out.Detail)
	}
	if err == nil {
		log.Info("hook", attrs...)
		return 0
	}
	log.Error("hook", append(attrs, "err", err)...)
	if stage == CreateRuntime && cfg.FailurePolicy == config.FailClosed {
		fmt.Fprintf(stderr, "resctrl-mon: container %s not started (failurePolicy: closed): %v\n", out.Container, err)
		return 1
	}
	return 0
}

func handle(stage string, st specs.State, cfg config.Config, log *slog.Logger) (lifecycle.Outcome, error) {
	m, err := lifecycle.New(cfg, log)
	if err != nil {
		return lifecycle.Outcome{Container: st.ID}, err
	}
	var out lifecycle.Outcome
	switch stage {
	case CreateRuntime:
		out, err = m.Create(st)
	case Poststop:
		out, err = m.Stop(st)
	default:
		return lifecycle.Outcome{Container: st.ID}, fmt.Errorf("unknown stage %q (want %s or %s)", stage, CreateRuntime, Poststop)
	}
	if removed, serr := m.MaybeSweep(); serr != nil || len(removed) > 0 {
		log.Info("sweep", "removed", removed, "err", serr)
	}
	return out, err
}

func outcome(out lifecycle.Outcome, err error) string {
	switch {
	case err == nil:
		return out.Action
	case out.Action == "pending":
		return "pending"
	case errors.Is(err, lifecycle.ErrSpoofed):
		return "refused"
	}
	return "failed"
}
