package hostinstall

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// host is the host's file system seen through HostRoot.
type host struct {
	root *os.Root
}

func openHost(hostRoot string) (*host, error) {
	if hostRoot == "" {
		return nil, errors.New("host root is empty (\"/\" when running on the host itself)")
	}
	fi, err := os.Stat(hostRoot)
	if err != nil {
		return nil, fmt.Errorf("host root %s: %w", hostRoot, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("host root %s: not a directory", hostRoot)
	}
	r, err := os.OpenRoot(hostRoot)
	if err != nil {
		return nil, fmt.Errorf("host root %s: %w", hostRoot, err)
	}
	return &host{root: r}, nil
}

func (h *host) Close() error { return h.root.Close() }

// rel turns a host path into a name inside the root.
func (h *host) rel(p string) string {
	if p = strings.TrimLeft(p, "/"); p == "" {
		return "."
	}
	return p
}

// writeFile writes data to host path p whole: a temp file in the same directory, synced,
// then renamed over p, and the directory synced, so that a reader (a runtime loading
// hooks.d, or exec'ing the hook) sees the old file or the new one, never a part.
func (h *host) writeFile(p string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(p)
	if err := h.root.MkdirAll(h.rel(dir), 0o755); err != nil {
		return fmt.Errorf("make %s: %w", dir, err)
	}
	// Named so that no runtime takes it for a registration (those end in .json).
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := filepath.Join(dir, "."+filepath.Base(p)+".tmp-"+hex.EncodeToString(suffix[:]))
	f, err := h.root.OpenFile(h.rel(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	defer func() {
		if err != nil {
			_ = h.root.Remove(h.rel(tmp))
		}
	}()
	_, werr := f.Write(data)
	// The mode again: the umask cut the one OpenFile asked for.
	cerr := f.Chmod(mode)
	serr := f.Sync()
	if err := errors.Join(werr, cerr, serr, f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := h.root.Rename(h.rel(tmp), h.rel(p)); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return h.syncDir(dir)
}

// remove removes host path p; nothing there is no error.
func (h *host) remove(p string) error {
	if err := h.root.Remove(h.rel(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return h.syncDir(filepath.Dir(p))
}

func (h *host) syncDir(dir string) error {
	d, err := h.root.Open(h.rel(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
