package hostinstall

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	securejoin "github.com/cyphar/filepath-securejoin"
	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// host is the host's file system seen under root.
type host struct {
	root string
}

func openHost(hostRoot string) (*host, error) {
	if hostRoot == "" {
		return nil, errors.New("host root is empty (\"/\" when running on the host itself)")
	}
	// securejoin wants a clean root without symlinks in it.
	root, err := filepath.EvalSymlinks(hostRoot)
	if err != nil {
		return nil, fmt.Errorf("host root %s: %w", hostRoot, err)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("host root %s: %w", hostRoot, err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("host root %s: %w", hostRoot, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("host root %s: not a directory", hostRoot)
	}
	return &host{root: root}, nil
}

// path is where host path p is seen here. Its directory's symlinks are resolved as the host
// would, an absolute one under the root (/host/etc/x -> /opt/x is /host/opt/x), so no path
// leads out of the root; the last component is not resolved (a rename or a remove acts on a
// link itself, never on what it names).
func (h *host) path(p string) (string, error) {
	dir, err := securejoin.SecureJoin(h.root, filepath.Dir(p))
	if err != nil {
		return "", fmt.Errorf("%s under %s: %w", p, h.root, err)
	}
	return filepath.Join(dir, filepath.Base(p)), nil
}

func (h *host) readFile(p string) ([]byte, error) {
	at, err := h.path(p)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(at)
}

// exists reports whether there is anything (a file, a link, a directory) at host path p.
func (h *host) exists(p string) (bool, error) {
	at, err := h.path(p)
	if err != nil {
		return false, err
	}
	_, err = os.Lstat(at)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", p, err)
	}
	return true, nil
}

// writeFile writes data to host path p whole: a temp file in the same directory, synced,
// then renamed over p, and the directory synced, so that a reader (a runtime loading
// hooks.d, or exec'ing the hook) sees the old file or the new one, never a part.
func (h *host) writeFile(p string, data []byte, mode fs.FileMode) error {
	dir, err := securejoin.SecureJoin(h.root, filepath.Dir(p))
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	// Made again after MkdirAll, which follows links as it creates: the directory must still
	// resolve under the root.
	if again, err := securejoin.SecureJoin(h.root, filepath.Dir(p)); err != nil || again != dir {
		return fmt.Errorf("write %s: its directory moved while it was made (%s, then %s): %w", p, dir, again, err)
	}
	// The temp file hidden, and named so that no runtime takes it for a registration (those
	// end in .json); the mode whatever the umask (the hook is exec'd, hooks.d read, by
	// others); synced, as both must survive a reboot.
	o := sysfile.Atomic{Mode: uint32(mode.Perm()), Durable: true, TempName: sysfile.HiddenTemp}
	if err := sysfile.WriteAtomicAt(unix.AT_FDCWD, dir, filepath.Base(p), data, o); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// remove removes host path p; nothing there is no error.
func (h *host) remove(p string) error {
	at, err := h.path(p)
	if err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	if err := os.Remove(at); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return syncDir(filepath.Dir(at))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
