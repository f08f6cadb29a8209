package wrapper

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/hooksd"
	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// HookName is the hook's file name; an entry running a file of that name (or with that
// argv[0]), given the stage as an argument, is taken to be resctrl-mon's wherever it is
// installed (CRI-O's hooks.d may have added it before the runtime, the wrapper, was called).
const HookName = hooksd.HookName

// ErrNotJSON is wrapped when config.json is not a JSON object: it is left as it is, and the
// runtime reports it in its own words.
var ErrNotJSON = errors.New("config.json is not a JSON object")

// SpecPath is the config.json the runtime reads: crun's --config, relative to the bundle, or
// <bundle>/config.json.
func SpecPath(c Command) string {
	name := "config.json"
	if c.ConfigFile != "" {
		name = c.ConfigFile
	}
	if filepath.IsAbs(name) {
		return name
	}
	bundle := c.Bundle
	if bundle == "" {
		bundle = "."
	}
	return filepath.Join(bundle, name)
}

// AddHooks lists hooks in the spec at path, each at its stage (createRuntime, poststop),
// unless the spec has resctrl-mon's hook at that stage already. It returns the stages added;
// none means the file was not written.
//
// The spec is decoded into raw JSON values, not specs.Spec: every field, a newer runtime's
// included, and every other hook is written back as it was (its bytes, less insignificant
// whitespace; the top-level keys come out sorted). The file is replaced by a rename in its
// own directory, so the runtime reads the old spec or the new one, never half of one; its
// mode and owner are kept.
func AddHooks(path string, hooks map[string]specs.Hook) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, ocistate.MaxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("read spec %s: %w", path, err)
	}
	if len(b) > ocistate.MaxConfigSize {
		return nil, fmt.Errorf("spec %s: larger than %d bytes", path, ocistate.MaxConfigSize)
	}
	out, added, err := addHooks(b, hooks)
	if err != nil || len(added) == 0 {
		return nil, err
	}
	return added, replace(path, fi, out)
}

// addHooks is AddHooks on the file's bytes.
func addHooks(b []byte, hooks map[string]specs.Hook) ([]byte, []string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrNotJSON, errors.Join(err, errors.New("null")))
	}
	var stagesOf map[string]json.RawMessage
	if raw, ok := top["hooks"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &stagesOf); err != nil {
			return nil, nil, fmt.Errorf("%w: hooks: %w", ErrNotJSON, err)
		}
	}
	if stagesOf == nil {
		stagesOf = map[string]json.RawMessage{}
	}
	var added []string
	for _, stage := range slices.Sorted(maps.Keys(hooks)) {
		list, err := hookList(stagesOf[stage])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: hooks.%s: %w", ErrNotJSON, stage, err)
		}
		ours := hooks[stage].Path
		present := hasOurs(list, stage, ours)
		if stage == "createRuntime" && !present {
			// CRI-O runs a hooks.d "prestart" entry at createRuntime.
			pre, _ := hookList(stagesOf["prestart"])
			present = hasOurs(pre, stage, ours)
		}
		if present {
			continue
		}
		h, err := json.Marshal(hooks[stage])
		if err != nil {
			return nil, nil, fmt.Errorf("hook for %s: %w", stage, err)
		}
		if stagesOf[stage], err = marshal(append(list, h)); err != nil {
			return nil, nil, err
		}
		added = append(added, stage)
	}
	if len(added) == 0 {
		return nil, nil, nil
	}
	var err error
	if top["hooks"], err = marshal(stagesOf); err != nil {
		return nil, nil, err
	}
	out, err := marshal(top)
	return out, added, err
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func hookList(raw json.RawMessage) ([]json.RawMessage, error) {
	if raw == nil || isNull(raw) {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// hasOurs tells whether one of the entries runs resctrl-mon's hook, ours being its path as
// the wrapper would list it, for stage.
func hasOurs(list []json.RawMessage, stage, ours string) bool {
	for _, raw := range list {
		var h struct {
			Path string   `json:"path"`
			Args []string `json:"args"`
		}
		if json.Unmarshal(raw, &h) != nil || !slices.Contains(h.Args, stage) {
			continue
		}
		// By its file name, or by its argv[0] (hooks.d JSON and the wrapper both set it),
		// or as the very hook the wrapper would add, whatever its file is called.
		if filepath.Base(h.Path) == HookName || filepath.Base(h.Args[0]) == HookName || h.Path == ours {
			return true
		}
	}
	return false
}

// marshal encodes without escaping <, > and & (json.Marshal would rewrite them inside every
// raw value it copies).
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// replace writes b to path by a rename from a temporary file beside it, with the old file's
// mode and owner. No fsync: the runtime reads the file right away from the page cache, and
// a bundle does not outlive a reboot.
func replace(path string, old os.FileInfo, b []byte) error {
	o := sysfile.Atomic{Mode: uint32(old.Mode().Perm()), TempName: specTemp}
	if st, ok := old.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
		o.Owner = &sysfile.Owner{UID: int(st.Uid), GID: int(st.Gid)}
	}
	dir, name := filepath.Split(path)
	if err := sysfile.WriteAtomicAt(unix.AT_FDCWD, dir, name, append(b, '\n'), o); err != nil {
		return fmt.Errorf("write spec %s: %w", path, err)
	}
	return nil
}

// specTemp names the spec's temporary file after the project, so that one a killed wrapper
// left in a bundle says whose it is.
func specTemp(name string, draw uint32) string {
	return ".resctrl-mon-" + name + "-" + strconv.FormatUint(uint64(draw), 10)
}
