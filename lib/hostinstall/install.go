package hostinstall

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/hooksd"
)

// The defaults are where `sudo make install` puts each file, and the Helm chart's values.
const (
	DefaultHookPath   = "/usr/local/libexec/oci/hooks.d/resctrl-mon-hook"
	DefaultHooksDir   = "/usr/share/containers/oci/hooks.d"
	DefaultConfigPath = "/etc/resctrl-mon/config.yaml"
	DefaultTimeout    = 10
)

// maxHookSize bounds the hook binary read into memory (it is ~10 MB).
const maxHookSize = 256 << 20

// Options say what goes where. Every *Path and HooksDir is a host path.
type Options struct {
	// HostRoot is where the host's root is seen ("/" on the host; "/host" in the chart's pod).
	HostRoot string
	// HookSource is the hook binary to copy (a path here, not on the host).
	HookSource string
	// HookPath is where the hook goes on the host.
	HookPath string
	// HooksDir is the runtime's hooks.d directory.
	HooksDir string
	// ConfigSource, when not empty, is a config file (a path here) to write at ConfigPath.
	ConfigSource string
	// ConfigPath is the config's host path. The hook is told it (--config) when its build
	// would look elsewhere.
	ConfigPath string
	// Manifest is the manifest's host path; empty: ManifestName beside ConfigPath.
	Manifest string
	// Timeout is the hooks.d timeout in whole seconds (the hook's budget is 2 s less).
	Timeout int
	// Adopt takes over a file at a destination that no manifest records (one an earlier
	// `make install` put there, say) instead of refusing.
	Adopt bool
	// WrapperPath, when not empty, is where the runtime wrapper (resctrl-mon-runtime, from
	// WrapperSource) goes on the host: a runtime handler pointed at it places exec'd
	// processes too. The wrapper lists the hook in the bundles it creates, so the hook is
	// installed with it.
	WrapperPath, WrapperSource string
	// NoRegistrations leaves the hooks.d JSON out: a node whose runtime places containers
	// through NRI, where only the wrapper's pods run the hook.
	NoRegistrations bool
	// RuntimeConfigs are the runtimes' config files and drop-in directories (host paths)
	// Uninstall reads first: while one names a file it would remove, it removes nothing
	// (ErrNamedByRuntime).
	RuntimeConfigs []string
}

// ManifestPath is where the manifest is on the host.
func (o Options) ManifestPath() string {
	if o.Manifest != "" {
		return o.Manifest
	}
	return filepath.Join(filepath.Dir(o.ConfigPath), ManifestName)
}

// registration returns the hooks.d options: --config only when the hook's build would not
// find the config where it is installed.
func (o Options) registration() hooksd.Options {
	r := hooksd.Options{HookPath: o.HookPath, Timeout: o.Timeout}
	if o.ConfigPath != config.DefaultPath {
		r.ConfigPath = o.ConfigPath
	}
	return r
}

// validate names the first option that is wrong.
func (o Options) validate(install bool) error {
	for _, p := range []struct{ what, path string }{
		{"--hook-path", o.HookPath}, {"--hooks-dir", o.HooksDir}, {"--config-path", o.ConfigPath}, {"--manifest", o.ManifestPath()},
	} {
		if err := hooksd.CheckHostPath(p.what, p.path); err != nil {
			return err
		}
	}
	targets := map[string]string{o.HookPath: "--hook-path", o.ConfigPath: "--config-path", o.ManifestPath(): "--manifest"}
	if len(targets) != 3 {
		return fmt.Errorf("--hook-path %s, --config-path %s and the manifest %s: want three different files",
			o.HookPath, o.ConfigPath, o.ManifestPath())
	}
	if o.WrapperPath != "" {
		if err := hooksd.CheckHostPath("--wrapper-path", o.WrapperPath); err != nil {
			return err
		}
		if what, ok := targets[o.WrapperPath]; ok {
			return fmt.Errorf("--wrapper-path %s is also %s", o.WrapperPath, what)
		}
		targets[o.WrapperPath] = "--wrapper-path"
	}
	for p, what := range targets {
		if filepath.Dir(p) == o.HooksDir {
			return fmt.Errorf("%s %s is in --hooks-dir %s: the runtime would read it as a registration", what, p, o.HooksDir)
		}
	}
	for _, c := range o.RuntimeConfigs {
		if err := hooksd.CheckHostPath("--runtime-config", c); err != nil {
			return err
		}
	}
	if !install {
		return nil
	}
	if o.HookSource == "" {
		return errors.New("--hook-source is empty")
	}
	if o.WrapperPath != "" && o.WrapperSource == "" {
		return errors.New("--wrapper-source is empty")
	}
	if o.Timeout < hooksd.MinTimeout || o.Timeout > hooksd.MaxTimeout {
		return fmt.Errorf("--timeout %d: want whole seconds from %d to %d (the hook's budget is 2 s less)",
			o.Timeout, hooksd.MinTimeout, hooksd.MaxTimeout)
	}
	return o.registration().Validate()
}

// Result lists what was written or removed, as host paths, in order.
type Result struct {
	Written, Removed []string
}

// Install puts the hook, the config (when ConfigSource is set) and the registrations on the
// host, in that order, after recording them in the manifest. Installing again replaces them
// with the same or newer content; files an earlier install recorded that this one no longer
// writes (the hooks dir changed, say) are removed last.
func Install(o Options) (Result, error) {
	var res Result
	if err := o.validate(true); err != nil {
		return res, err
	}
	hook, err := readSource("--hook-source", o.HookSource, maxHookSize)
	if err != nil {
		return res, err
	}
	if !isELF(hook) {
		return res, fmt.Errorf("--hook-source %s: not an executable (no ELF header)", o.HookSource)
	}
	var wrapper []byte
	if o.WrapperPath != "" {
		if wrapper, err = readSource("--wrapper-source", o.WrapperSource, maxHookSize); err != nil {
			return res, err
		}
		if !isELF(wrapper) {
			return res, fmt.Errorf("--wrapper-source %s: not an executable (no ELF header)", o.WrapperSource)
		}
	}
	var conf []byte
	// The config the wrapper will read: the one installed now, else the node's, else the
	// defaults.
	wcfg := config.Default()
	if o.ConfigSource != "" {
		if conf, err = readSource("--config", o.ConfigSource, 1<<20); err != nil {
			return res, err
		}
		// The hook would apply its failure policy to a broken config at every container
		// start; refuse it here, where someone reads the error.
		c, err := config.Parse(bytes.NewReader(conf))
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			return res, fmt.Errorf("--config %s: %w", o.ConfigSource, err)
		}
		wcfg = c
	}
	regs, err := hooksd.Files(o.registration())
	if err != nil {
		return res, err
	}
	if o.NoRegistrations {
		regs = nil
	}

	h, err := openHost(o.HostRoot)
	if err != nil {
		return res, fmt.Errorf("--host-root: %w", err)
	}
	if o.WrapperPath != "" {
		if conf == nil {
			if b, err := h.readFile(o.ConfigPath); err == nil {
				if c, err := config.Parse(bytes.NewReader(b)); err == nil {
					wcfg = c
				}
			}
		}
		if err := h.checkRuntime(wcfg.Runtime); err != nil {
			return res, err
		}
	}
	mpath := o.ManifestPath()
	old, err := h.readManifest(mpath)
	if err != nil {
		return res, err
	}

	type file struct {
		path string
		data []byte
		mode os.FileMode
	}
	files := []file{{o.HookPath, hook, 0o755}}
	if wrapper != nil {
		files = append(files, file{o.WrapperPath, wrapper, 0o755})
	}
	if conf != nil {
		files = append(files, file{o.ConfigPath, conf, 0o644})
	}
	for _, name := range slices.Sorted(maps.Keys(regs)) {
		files = append(files, file{filepath.Join(o.HooksDir, name), regs[name], 0o644})
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.path)
		if old.has(f.path) || o.Adopt {
			continue
		}
		if there, err := h.exists(f.path); err != nil {
			return res, err
		} else if there {
			return res, fmt.Errorf("%s exists and %s does not record it as installed by resctrl-mon: "+
				"remove it, choose another path, or take it over with --adopt", f.path, mpath)
		}
	}

	// Recorded before written: a killed install leaves only files the manifest claims.
	if err := h.writeManifest(mpath, union(old.Files, paths)); err != nil {
		return res, err
	}
	for _, f := range files {
		if err := h.writeFile(f.path, f.data, f.mode); err != nil {
			return res, err
		}
		res.Written = append(res.Written, f.path)
	}
	stale := slices.DeleteFunc(slices.Clone(old.Files), func(p string) bool { return slices.Contains(paths, p) })
	removed, kept, rerr := h.removeInOrder(stale)
	res.Removed = removed
	if err := h.writeManifest(mpath, union(paths, kept)); err != nil {
		return res, errors.Join(rerr, err)
	}
	return res, rerr
}

// Uninstall removes what the manifest records, registrations first, then the manifest. No
// manifest: nothing of ours is there, and nothing is removed. While a runtime config
// (RuntimeConfigs) names a recorded file, or cannot be read, nothing is removed either.
func Uninstall(o Options) (Result, error) {
	var res Result
	if err := o.validate(false); err != nil {
		return res, err
	}
	h, err := openHost(o.HostRoot)
	if err != nil {
		return res, fmt.Errorf("--host-root: %w", err)
	}
	mpath := o.ManifestPath()
	if there, err := h.exists(mpath); err != nil || !there {
		return res, err
	}
	m, err := h.readManifest(mpath)
	if err != nil {
		return res, err
	}
	refs, err := h.runtimeReferences(o.RuntimeConfigs, checkedPaths(m.Files))
	if err != nil {
		return res, fmt.Errorf("kept everything on this node: whether a runtime still names what resctrl-mon installed is unknown: %w", err)
	}
	if len(refs) > 0 {
		return res, &InUseError{Refs: refs}
	}
	removed, kept, err := h.removeInOrder(m.Files)
	res.Removed = removed
	if err != nil {
		// What could not be removed stays recorded, for the next uninstall.
		return res, errors.Join(err, h.writeManifest(mpath, kept))
	}
	if err := h.remove(mpath); err != nil {
		return res, err
	}
	res.Removed = append(res.Removed, mpath)
	return res, nil
}

// removeInOrder removes files, registrations (*.json) first: a runtime must never load one
// whose hook is gone; then the rest in the reverse of their install order (the wrapper, which
// names the hook, before the hook). It returns what it removed and what it could not.
func (h *host) removeInOrder(files []string) (removed, kept []string, err error) {
	var ordered, rest []string
	for _, p := range files {
		if filepath.Ext(p) == ".json" {
			ordered = append(ordered, p)
		} else {
			rest = append(rest, p)
		}
	}
	slices.Reverse(rest)
	ordered = append(ordered, rest...)
	var errs []error
	for _, p := range ordered {
		if e := h.remove(p); e != nil {
			errs = append(errs, e)
			kept = append(kept, p)
			continue
		}
		removed = append(removed, p)
	}
	return removed, kept, errors.Join(errs...)
}

func readSource(flag, path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s %s: larger than %d bytes", flag, path, limit)
	}
	return b, nil
}

func isELF(b []byte) bool { return len(b) >= 4 && bytes.Equal(b[:4], []byte("\x7fELF")) }

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, p := range b {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
