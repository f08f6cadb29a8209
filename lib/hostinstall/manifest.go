package hostinstall

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/resctrl-mon/resctrl-mon/lib/hooksd"
)

// manifestVersion is the manifest's format; a manifest of another version is refused, not
// guessed at.
const manifestVersion = 1

// maxManifestSize bounds what is read: a manifest lists a handful of paths.
const maxManifestSize = 64 << 10

// ManifestName is the manifest's file name beside the config (Options.Manifest's default).
const ManifestName = "host-install.json"

// manifest lists the host paths one install wrote.
type manifest struct {
	Version int      `json:"version"`
	Files   []string `json:"files"`
}

// parseManifest reads a manifest, refusing one whose paths are not absolute and clean: its
// paths are what uninstall removes.
func parseManifest(b []byte) (manifest, error) {
	var m manifest
	if len(b) > maxManifestSize {
		return m, fmt.Errorf("larger than %d bytes", maxManifestSize)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return manifest{}, err
	}
	if m.Version != manifestVersion {
		return manifest{}, fmt.Errorf("version %d, want %d", m.Version, manifestVersion)
	}
	for _, f := range m.Files {
		if err := hooksd.CheckHostPath("file", f); err != nil {
			return manifest{}, err
		}
	}
	return m, nil
}

func (m manifest) has(p string) bool { return slices.Contains(m.Files, p) }

// readManifest reads the manifest at host path p; none there is an empty one.
func (h *host) readManifest(p string) (manifest, error) {
	b, err := h.readFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return manifest{Version: manifestVersion}, nil
	}
	if err != nil {
		return manifest{}, fmt.Errorf("read manifest %s: %w", p, err)
	}
	m, err := parseManifest(b)
	if err != nil {
		return manifest{}, fmt.Errorf("manifest %s: %w", p, err)
	}
	return m, nil
}

func (h *host) writeManifest(p string, files []string) error {
	b, err := json.MarshalIndent(manifest{Version: manifestVersion, Files: files}, "", "  ")
	if err != nil {
		return fmt.Errorf("manifest %s: %w", p, err)
	}
	return h.writeFile(p, append(b, '\n'), 0o644)
}
