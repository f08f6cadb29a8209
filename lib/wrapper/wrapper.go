// Package wrapper is resctrl-mon-runtime's behaviour behind its thin main: a wrapper for runc
// and crun, put in their place (containerd's BinaryName, a CRI-O runtime handler's
// runtime_path, podman --runtime, or called as runc), that does two things and then execs
// the real runtime (config key runtime) with its command line untouched:
//
//   - create and run: lists resctrl-mon-hook's createRuntime and poststop hooks in the
//     bundle's config.json (AddHooks), so runtimes with neither hooks.d nor NRI place
//     containers as CRI-O and podman do;
//   - exec: has its own thread written into the container's pod group (a joiner process,
//     JoinArg) before it becomes the runtime, so the exec'd process and all it forks are
//     counted in the pod's group from their first instruction. The runtime's own few
//     milliseconds before the process starts are counted there too.
//
// Only what those two need is read of the command line (ParseArgs); every other command goes
// straight to the runtime. A failure of the wrapper's own never stops the runtime's command
// unless failurePolicy is closed; a missing real runtime is an error.
package wrapper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/budget"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/hooksd"
	"github.com/resctrl-mon/resctrl-mon/lib/logging"
)

// Prog is the wrapper's name in logs and messages.
const Prog = "resctrl-mon-runtime"

// ErrBudget: the wrapper's work outlived hookBudget; the runtime is run regardless (fail-open).
// It is budget.ErrExhausted, the one error of every front end's budget.
var ErrBudget = budget.ErrExhausted

// ErrPanic is wrapped when the wrapper's own work panicked.
var ErrPanic = errors.New("internal error")

// ErrRuntime is wrapped when the real runtime cannot be run.
var ErrRuntime = errors.New("real runtime unusable")

// Exec is what the process becomes: the real runtime, with the wrapper's own arguments.
type Exec struct {
	Path string
	Argv []string
}

// Prepare does the wrapper's work for the command line args (os.Args) and returns what to
// exec. tid is the thread that will call execve (exec joins that thread to the pod's group).
// An error means the runtime must not be run: the real runtime is missing, or the wrapper
// failed under failurePolicy closed; stderr has been told why.
func Prepare(args, environ []string, tid int, stderr io.Writer) (Exec, error) {
	start := time.Now()
	cfgPath := config.Path("", environ)
	cfg, cfgErr := config.Resolve(cfgPath, environ, nil)
	if len(args) == 0 {
		args = []string{Prog}
	}
	x := Exec{Path: cfg.Runtime, Argv: append([]string{cfg.Runtime}, args[1:]...)}
	if err := checkRuntime(cfg.Runtime); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Prog, err)
		return x, err
	}
	cmd := ParseArgs(args[1:])
	if (!acting[cmd.Name] && cmd.Err == nil) || cmd.Help {
		return x, nil // every other command: straight to the runtime, nothing read or logged
	}
	res, err := work(cmd, cfg, cfgErr, hooksFor(cfg, cfgPath, environ), tid, start)
	// Every command the wrapper works for starts a container (create, run) or a process in
	// one (exec). One it cannot read for sure (a newer runtime's flag) runs unplaced under
	// either policy (config.Call.Unreadable says why), and the log says why.
	v := cfg.FailurePolicy.Decide(config.Call{Err: err, Starts: true, Unreadable: errors.Is(err, ErrUnreadable)})
	// An exec that went well is not logged: exec probes run every few seconds in every pod
	// that has one, and a line (and a syslog connection) each would be noise and cost. One
	// into a pending pod is, as every call that leaves something unplaced.
	if v != config.Proceed || cmd.Name != "exec" || res.action == actionPending {
		logCall(cfg, stderr, cmd, res, err, v, start)
	}
	if v == config.Refuse {
		err = config.Refusal(cmd.Name+" "+cmd.ContainerID+" not run", err)
		fmt.Fprintf(stderr, "%s: %v\n", Prog, err)
		return x, err
	}
	return x, nil
}

// checkRuntime refuses a runtime that is not there, not executable, or the wrapper itself
// (configured as its own runtime, it would exec itself forever).
func checkRuntime(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %w (config key runtime names the real runc or crun)", ErrRuntime, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%w: %s is not an executable file (config key runtime)", ErrRuntime, path)
	}
	if self, err := os.Stat("/proc/self/exe"); err == nil && os.SameFile(fi, self) {
		return fmt.Errorf("%w: %s is this wrapper itself (config key runtime must name the real runc or crun)", ErrRuntime, path)
	}
	return nil
}

// result is what the wrapper did.
type result struct {
	action string // hooks-added, hooks-present, placed, no-group, pending, skipped, failed
	detail string // the stages added, the group joined, the spec's path
}

// work does the command's part inside the time budget counted from start, less its tail,
// kept for the log line.
func work(cmd Command, cfg config.Config, cfgErr error, hooks map[string]specs.Hook, tid int, start time.Time) (result, error) {
	if cfgErr != nil {
		return result{action: "skipped"}, fmt.Errorf("config: %w", cfgErr)
	}
	if cmd.Err != nil {
		return result{action: "skipped"}, cmd.Err
	}
	type done struct {
		r   result
		err error
	}
	b := budget.Budget{Start: start, Total: time.Duration(cfg.HookBudget)}
	deadline := b.Deadline()
	d, err := budget.Run(nil, time.Until(deadline), func() done {
		r, err := guarded(func() (result, error) {
			if cmd.Name == "exec" {
				return join(cmd, cfg, tid, deadline)
			}
			path := SpecPath(cmd)
			added, err := AddHooks(path, hooks)
			if len(added) == 0 {
				return result{action: "hooks-present", detail: path}, err
			}
			return result{action: "hooks-added", detail: path + " " + strings.Join(added, ",")}, err
		})
		return done{r, err}
	})
	if err != nil {
		return result{action: "failed"}, fmt.Errorf("%w: %s (the rest is kept to report)", ErrBudget, b.Passed())
	}
	if d.err != nil {
		d.r.action = "failed"
	}
	return d.r, d.err
}

// join places the exec: tid, the thread that execs the runtime, written into the
// container's group by a joiner process (JoinArg says why not by this one), waited for until
// deadline.
func join(cmd Command, cfg config.Config, tid int, deadline time.Time) (result, error) {
	g, err := findGroup(cfg.StateDir, cmd.ContainerID)
	if g.Path == "" && err == nil {
		return result{action: "no-group"}, nil
	}
	if err == nil && g.pending != "" {
		return execPending(cfg.StateDir, g), nil
	}
	if err == nil {
		err = joinAside(joinRequest{Group: g, Root: cfg.ResctrlRoot, Simulator: cfg.ResctrlSimulator, Tid: tid, Parent: os.Getpid(), Container: cmd.ContainerID,
			Deadline: deadline, Log: cfg.Log, StateDir: cfg.StateDir})
	}
	return result{action: "placed", detail: g.Path}, err
}

// guarded runs f, turning a panic into an error: a bug in the wrapper's own work must not
// stop the runtime's command (fail-open).
func guarded(f func() (result, error)) (r result, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = result{action: "failed"}, fmt.Errorf("%w: %v", ErrPanic, p)
		}
	}()
	return f()
}

// hooksFor is the hook entries the wrapper lists: as the installed hooks.d JSON has them
// (a timeout two seconds over the hook's own budget, which it is given, so the hook ends and
// applies its failure policy first), with the wrapper's RESCTRL_MON_ variables, the config
// file's name among them, so that the hook reads the configuration the wrapper read.
func hooksFor(cfg config.Config, cfgPath string, environ []string) map[string]specs.Hook {
	b := time.Duration(cfg.HookBudget)
	env := hooksd.Env()
	for _, kv := range environ {
		if strings.HasPrefix(kv, config.EnvPrefix) && !strings.HasPrefix(kv, config.ConfigEnv+"=") {
			env = append(env, kv)
		}
	}
	if cfgPath != "" {
		// The hook runs in the bundle: a relative name must not change meaning.
		if abs, err := filepath.Abs(cfgPath); err == nil {
			cfgPath = abs
		}
		env = append(env, config.ConfigEnv+"="+cfgPath)
	}
	out := map[string]specs.Hook{}
	for _, stage := range hooksd.Stages {
		out[stage] = hooksd.Entry(cfg.RuntimeHook, "", b, hooksd.TimeoutFor(b), env, stage)
	}
	return out
}

// logCall writes one line about a create, a run or a failed exec, at the level of v, the
// failure policy's verdict on it.
func logCall(cfg config.Config, stderr io.Writer, cmd Command, r result, err error, v config.Verdict, start time.Time) {
	// A line syslog does not take within a quarter of the budget's tail is dropped: a
	// stalled journal must not hold the runtime's command past the budget either.
	tail := budget.Tail(time.Duration(cfg.HookBudget))
	log, closer := logging.OpenOr(stderr, cfg.Log, Prog, filepath.Join(cfg.StateDir, "hook.log"), logging.WithSendTimeout(tail/4))
	defer closer.Close()
	attrs := []any{"command", cmd.Name, "container", cmd.ContainerID, "action", r.action,
		"duration", time.Since(start).Round(time.Microsecond)}
	if r.detail != "" {
		attrs = append(attrs, "detail", r.detail)
	}
	if len(cmd.Unknown) > 0 {
		// Passed on as given: a newer runtime's flags, which the wrapper read past.
		attrs = append(attrs, "unknown_flags", strings.Join(cmd.Unknown, " "))
	}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	log.Log(context.Background(), v.Level(), "runtime", attrs...)
}
