// Package hooksd writes the hooks.d registrations (OCI hooks schema 1.0.0) that make CRI-O
// and podman run resctrl-mon-hook at createRuntime and poststop. It is the one generator of
// those files: `make install` and `resctrl-mon host install` (the Helm chart's hooks mode)
// both call it, so the two cannot drift.
package hooksd

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The stages the hook runs at, in the order they happen to a container.
const (
	CreateRuntime = "createRuntime"
	Poststop      = "poststop"
)

// Stages lists every stage the hook is registered for.
var Stages = []string{CreateRuntime, Poststop}

// The runtime kills a hook after the registration's timeout (whole seconds). The hook is
// given margin less as its --hookBudget, so that it ends, and applies its failure policy,
// first; the budget must be at least a second and at most the config's bound of an hour.
const (
	margin     = 2 * time.Second
	MinTimeout = 3
	MaxTimeout = 3600
)

// HookName is the hook's file name, and its argv[0] in every entry.
const HookName = "resctrl-mon-hook"

// Env is the environment a runtime gives the hook: nothing is inherited from the runtime (a
// hooks.d file has no inheritance, a bundle's hook entry neither).
func Env() []string {
	return []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
}

// TimeoutFor is the whole-second runtime timeout that leaves a hook given budget its margin
// to end, and apply its failure policy, before the runtime kills it.
func TimeoutFor(budget time.Duration) int {
	return int(math.Ceil(budget.Seconds())) + int(margin/time.Second)
}

// Entry is the hook of one stage as a runtime runs it: the one shape of every registration,
// whether a hooks.d file (Files) or an entry the runtime wrapper writes into a bundle's
// config.json. configPath "" passes no --config (the hook then reads RESCTRL_MON_CONFIG from
// env, or its built-in path).
func Entry(hookPath, configPath string, budget time.Duration, timeout int, env []string, stage string) specs.Hook {
	args := []string{HookName, "--hookBudget", budget.String()}
	if configPath != "" {
		args = append(args, "--config", configPath)
	}
	return specs.Hook{Path: hookPath, Args: append(args, stage), Env: env, Timeout: &timeout}
}

// Options say where the hook is and how long it may take. Paths are the host's: the runtime
// reads them on the host.
type Options struct {
	// HookPath is the resctrl-mon-hook binary the runtime executes.
	HookPath string
	// ConfigPath, when not empty, is passed to the hook as --config. Empty: the hook reads
	// the config where its build says (config.DefaultPath).
	ConfigPath string
	// Timeout is the hooks.d "timeout" in whole seconds, MinTimeout to MaxTimeout.
	Timeout int
}

// Validate names the first option that is wrong.
func (o Options) Validate() error {
	if err := CheckHostPath("hook path", o.HookPath); err != nil {
		return err
	}
	if o.ConfigPath != "" {
		if err := CheckHostPath("config path", o.ConfigPath); err != nil {
			return err
		}
	}
	if o.Timeout < MinTimeout || o.Timeout > MaxTimeout {
		return fmt.Errorf("timeout %d: want whole seconds from %d to %d (the hook's budget is %s less)",
			o.Timeout, MinTimeout, MaxTimeout, margin)
	}
	return nil
}

// Budget is the --hookBudget the registrations pass to the hook.
func (o Options) Budget() time.Duration { return time.Duration(o.Timeout)*time.Second - margin }

// CheckHostPath refuses a path a runtime or an installer could misread: relative, not
// clean (".." or "//"), the root itself, or holding characters a runtime's JSON or a
// command line would mangle.
func CheckHostPath(what, p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%s is empty", what)
	case !filepath.IsAbs(p):
		return fmt.Errorf("%s %q: want an absolute path", what, p)
	case filepath.Clean(p) != p:
		return fmt.Errorf("%s %q: want a clean path (%q)", what, p, filepath.Clean(p))
	case p == "/":
		return fmt.Errorf("%s %q: want a file, not the root", what, p)
	case strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fmt.Errorf("%s %q: holds a control character", what, p)
	}
	return nil
}

// FileName is the hooks.d file of stage: resctrl-mon-createruntime.json.
func FileName(stage string) string { return "resctrl-mon-" + strings.ToLower(stage) + ".json" }

// Registration is one hooks.d file.
type Registration struct {
	Version string     `json:"version"`
	Hook    specs.Hook `json:"hook"`
	When    When       `json:"when"`
	Stages  []string   `json:"stages"`
}

// When says which containers the hook runs for: all of them (the hook's own config filters).
type When struct {
	Always bool `json:"always"`
}

// Files returns the registration of each stage, by file name.
func Files(o Options) (map[string][]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, stage := range Stages {
		r := Registration{
			Version: "1.0.0",
			Hook:    Entry(o.HookPath, o.ConfigPath, o.Budget(), o.Timeout, Env(), stage),
			When:    When{Always: true},
			Stages:  []string{stage},
		}
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("hooks.d %s: %w", stage, err)
		}
		files[FileName(stage)] = append(b, '\n')
	}
	return files, nil
}

// ParseTimeout reads a timeout given as text (a flag, a make variable): whole seconds from
// MinTimeout to MaxTimeout, no sign, no leading zero (a JSON number has none).
func ParseTimeout(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || s != strconv.Itoa(n) || n < MinTimeout || n > MaxTimeout {
		return 0, fmt.Errorf("timeout %q: want whole seconds from %d to %d", s, MinTimeout, MaxTimeout)
	}
	return n, nil
}
