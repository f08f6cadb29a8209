package hostinstall

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
)

// DefaultRuntimeConfigs are where containerd and CRI-O read their config: a runtime handler
// that names the wrapper (containerd's BinaryName, CRI-O's runtime_path) is in one of them.
// A directory stands for every file directly in it (the drop-ins).
var DefaultRuntimeConfigs = []string{
	"/etc/containerd/config.toml",
	"/etc/containerd/conf.d",
	"/etc/crio/crio.conf",
	"/etc/crio/crio.conf.d",
}

// maxRuntimeConfig bounds one runtime config read: a larger one is an error (keep
// everything), not a file read in part.
const maxRuntimeConfig = 4 << 20

// ErrNamedByRuntime is an uninstall refused because a runtime's config names a file it would
// remove. Removing the wrapper while a runtime handler names it leaves that handler's pods
// unable to exec or stop, and CRI-O refuses to start with a runtime_path that is gone.
var ErrNamedByRuntime = errors.New("a runtime's config names a file resctrl-mon installed")

// Reference is one line of a runtime config naming one of our files.
type Reference struct {
	File string // the config's host path
	Line int    // from 1
	Path string // our file it names
}

// InUseError lists every Reference an uninstall found; errors.Is(err, ErrNamedByRuntime).
type InUseError struct {
	Refs []Reference
}

func (e *InUseError) Error() string {
	var b strings.Builder
	b.WriteString("kept everything on this node: ")
	for i, r := range e.Refs {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s line %d names %s", r.File, r.Line, r.Path)
	}
	b.WriteString(", which this uninstall would remove. First delete the pods that run through it (its RuntimeClass), " +
		"remove the runtime handler naming it (containerd: the runtime whose options' BinaryName is that path; " +
		"CRI-O: the runtime whose runtime_path is), and restart the runtime")
	return b.String()
}

func (e *InUseError) Unwrap() error { return ErrNamedByRuntime }

// findPaths returns every line of a runtime config that names one of paths. It is a text
// search, not a TOML parser: containerd and CRI-O spell the same handler in several shapes
// (v2 and v3 plugin names, inline tables, drop-ins), and a path named anywhere but in a
// comment line is reason enough to stop. A path counts only as a whole: the bytes either
// side of it must not be ones a path goes on with (/usr/local/bin/resctrl-mon-runtime is not
// named by /usr/local/bin/resctrl-mon-runtime.old). Lines that start with # are comments in
// TOML and skipped.
func findPaths(text []byte, paths []string) []Reference {
	var refs []Reference
	for i, line := range bytes.Split(text, []byte("\n")) {
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '#' {
			continue
		}
		for _, p := range paths {
			if p != "" && namesWhole(line, []byte(p)) {
				refs = append(refs, Reference{Line: i + 1, Path: p})
			}
		}
	}
	return refs
}

func namesWhole(line, p []byte) bool {
	for off := 0; off <= len(line)-len(p); {
		i := bytes.Index(line[off:], p)
		if i < 0 {
			return false
		}
		start, end := off+i, off+i+len(p)
		if (start == 0 || !pathByte(line[start-1])) && (end == len(line) || !pathByte(line[end])) {
			return true
		}
		off = start + 1
	}
	return false
}

func pathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/+~@", c) >= 0
}

// runtimeReferences reads each runtime config (a file, or every regular file directly in a
// directory) on the host and returns where it names one of paths. A config that is not there
// is a runtime the node does not run; one that cannot be read is an error: the answer is
// unknown, and the caller keeps everything.
func (h *host) runtimeReferences(configs, paths []string) ([]Reference, error) {
	var refs []Reference
	for _, c := range configs {
		at, err := securejoin.SecureJoin(h.root, c)
		if err != nil {
			return nil, fmt.Errorf("runtime config %s: %w", c, err)
		}
		fi, err := os.Stat(at)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("runtime config %s: %w", c, err)
		}
		files := []string{c}
		if fi.IsDir() {
			entries, err := os.ReadDir(at)
			if err != nil {
				return nil, fmt.Errorf("runtime config dir %s: %w", c, err)
			}
			files = files[:0]
			for _, e := range entries {
				files = append(files, filepath.Join(c, e.Name()))
			}
		}
		for _, f := range files {
			found, err := h.referencesIn(f, paths, fi.IsDir())
			if err != nil {
				return nil, err
			}
			refs = append(refs, found...)
		}
	}
	return refs, nil
}

// referencesIn reads one config file; in a directory, what is not a regular file (a
// subdirectory, a socket) is no config of the runtime's and skipped.
func (h *host) referencesIn(file string, paths []string, inDir bool) ([]Reference, error) {
	at, err := securejoin.SecureJoin(h.root, file)
	if err != nil {
		return nil, fmt.Errorf("runtime config %s: %w", file, err)
	}
	fi, err := os.Stat(at)
	if err != nil || (inDir && !fi.Mode().IsRegular()) {
		if inDir && (err == nil || errors.Is(err, fs.ErrNotExist)) {
			return nil, nil
		}
		if err == nil {
			err = errors.New("not a regular file")
		}
		return nil, fmt.Errorf("runtime config %s: %w", file, err)
	}
	f, err := os.Open(at)
	if err != nil {
		return nil, fmt.Errorf("runtime config %s: %w", file, err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxRuntimeConfig+1))
	if err != nil {
		return nil, fmt.Errorf("runtime config %s: %w", file, err)
	}
	if len(b) > maxRuntimeConfig {
		return nil, fmt.Errorf("runtime config %s: larger than %d bytes", file, maxRuntimeConfig)
	}
	refs := findPaths(b, paths)
	for i := range refs {
		refs[i].File = file
	}
	return refs, nil
}

// checkedPaths are the files of a manifest a runtime config could name: every one but the
// hooks.d registrations, which a runtime finds by their directory, never by name.
func checkedPaths(files []string) []string {
	return slices.DeleteFunc(slices.Clone(files), func(p string) bool { return filepath.Ext(p) == ".json" })
}
