package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// LoggedStages are the hook stages a StageLogger is registered at, in the order a container
// meets them: every stage a hooks.d entry may name but startContainer, which runs inside the
// container, where the host's hook script does not exist (the container would fail to start).
var LoggedStages = []string{"prestart", "createRuntime", "createContainer", "poststart", "poststop"}

// StageLogger is a logging hook registered through a hooks.d directory (CRI-O's hooks_dir,
// podman's --hooks-dir) at each of LoggedStages, one entry per stage, so each call says at which stage
// the runtime ran it. A call keeps the state the runtime wrote on stdin, as written, and the
// bundle's config.json as it was at that moment (when it could be read).
type StageLogger struct {
	// HooksDir is the hooks.d directory; Dir where the calls are written.
	HooksDir, Dir string
}

// StageCall is one call of a StageLogger.
type StageCall struct {
	Stage string
	// State is what the runtime wrote on the hook's stdin.
	State json.RawMessage
	// ID is the state's container id.
	ID string
	// Config is the bundle's config.json, nil where it could not be read.
	Config json.RawMessage
}

// NewStageLogger writes the hook (a shell script: it needs jq) and its hooks.d directory.
func NewStageLogger(t testing.TB) *StageLogger {
	t.Helper()
	l := &StageLogger{HooksDir: t.TempDir(), Dir: t.TempDir()}
	// A record is complete when its .state file exists: the config is copied first and the
	// state renamed into place last. The hook's environment is the runtime's or none.
	script := WriteScript(t, "stage-log-hook", fmt.Sprintf(`PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
state=$(cat)
rec=%s/$(date +%%s%%N).$$.$1
printf '%%s' "$state" >"$rec.tmp"
bundle=$(printf '%%s' "$state" | jq -r '.bundle // empty')
if [ -n "$bundle" ] && [ -r "$bundle/config.json" ]; then
	cp "$bundle/config.json" "$rec.config"
fi
mv "$rec.tmp" "$rec.state"
`, shellQuote(l.Dir)))
	for i, stage := range LoggedStages {
		entry := struct {
			Version string          `json:"version"`
			Hook    specs.Hook      `json:"hook"`
			When    map[string]bool `json:"when"`
			Stages  []string        `json:"stages"`
		}{"1.0.0", specs.Hook{Path: script, Args: []string{"stage-log-hook", stage}, Timeout: intPtr(10)},
			map[string]bool{"always": true}, []string{stage}}
		data, err := json.MarshalIndent(entry, "", "\t")
		if err != nil {
			t.Fatalf("e2e: encode hooks.d entry: %v", err)
		}
		name := fmt.Sprintf("%d-log-%s.json", i, strings.ToLower(stage))
		if err := os.WriteFile(filepath.Join(l.HooksDir, name), data, 0o644); err != nil {
			t.Fatalf("e2e: write hooks.d entry: %v", err)
		}
	}
	return l
}

func intPtr(n int) *int { return &n }

// Calls returns the calls so far, in the order they were made.
func (l *StageLogger) Calls() ([]StageCall, error) {
	entries, err := os.ReadDir(l.Dir)
	if err != nil {
		return nil, fmt.Errorf("read hook calls: %w", err)
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".state"); ok {
			names = append(names, name)
		}
	}
	// Names start with the call's time in nanoseconds, all of the same width.
	slices.Sort(names)
	var calls []StageCall
	for _, name := range names {
		parts := strings.SplitN(name, ".", 3)
		if len(parts) != 3 {
			return calls, fmt.Errorf("hook call %s: malformed name", name)
		}
		c := StageCall{Stage: parts[2]}
		base := filepath.Join(l.Dir, name)
		if c.State, err = os.ReadFile(base + ".state"); err != nil {
			return calls, fmt.Errorf("hook call %s: %w", name, err)
		}
		var st specs.State
		if err := json.Unmarshal(c.State, &st); err != nil {
			return calls, fmt.Errorf("hook call %s: decode state %q: %w", name, c.State, err)
		}
		c.ID = st.ID
		if c.Config, err = os.ReadFile(base + ".config"); errors.Is(err, fs.ErrNotExist) {
			c.Config = nil
		} else if err != nil {
			return calls, fmt.Errorf("hook call %s: %w", name, err)
		}
		calls = append(calls, c)
	}
	return calls, nil
}
