// Package registry is resctrl-mon's small on-host memory: which groups it owns, which containers
// are in each, and a lock per group. Hooks are separate processes, often several at once, so
// everything lives in files under one directory (on tmpfs, like resctrl itself) and every
// change is an atomic rename under the group's flock.
package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// Record is one owned group. Its existence is the proof of ownership: a group with no record
// was not made by resctrl-mon and is never touched.
type Record struct {
	Group string `json:"group"` // directory name under mon_groups/
	Path  string `json:"path"`  // below the resctrl root, e.g. "mon_groups/<uid>"
	Class string `json:"class,omitempty"`

	PodUID    string `json:"podUID,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	PodName   string `json:"podName,omitempty"`
	// SandboxID binds the group to the pod sandbox it was made for: a container claiming the
	// same pod with another live sandbox is refused.
	SandboxID    string `json:"sandboxID,omitempty"`
	SandboxEnded bool   `json:"sandboxEnded,omitempty"`
	// NRI: a runtime told of the pod over NRI, so that runtime's pod list (at the NRI
	// adapter's Synchronize) says whether its sandbox is still there.
	NRI bool `json:"nri,omitempty"`

	// Containers maps each container in the group to when it was placed.
	Containers map[string]time.Time `json:"containers"`
	// Inits identifies each container's init process, so reconcile can tell a container
	// that is alive but not yet in its runtime's state (runtimes write it after the
	// createRuntime hooks ran) from one that is gone.
	Inits map[string]Init `json:"inits,omitempty"`
	// Cgroups holds each container's cgroup v2 path (the "0::" line of /proc/<pid>/cgroup,
	// relative to the cgroup2 mount), for the pressure (PSI) readers.
	Cgroups map[string]string `json:"cgroups,omitempty"`
	// Names holds each container's name, by id, where its front end knew one that fits
	// (ValidContainerName): the Kubernetes container name (NRI's Container.Name; the hook:
	// the runtime's io.kubernetes.container.name or io.kubernetes.cri.container-name
	// annotation). The exporter labels a container by it, as cAdvisor and kubelet do; a
	// container without one (a plain OCI container, a record of an older version) by its id.
	Names map[string]string `json:"names,omitempty"`
	// PodCgroup is the pod's cgroup v2 path, as its runtime named it (the sandbox's cgroup
	// parent, podman's pod cgroup) and found as the parent of a container's; "" when the
	// runtime named none (a container with no pod: its parent is a whole slice).
	PodCgroup string    `json:"podCgroup,omitempty"`
	Created   time.Time `json:"created"`
	// IdleSince is when the last container left; the group is kept for the retention window.
	IdleSince *time.Time `json:"idleSince,omitempty"`
	// Pending says why the group or a container could not be placed (e.g. no free RMID);
	// a later hook call or reconcile retries.
	Pending string `json:"pending,omitempty"`
	// LateAssigned: reconcile placed (some of) the pod's tasks after they had started, so
	// work they did before, and by what they forked before, was counted elsewhere.
	LateAssigned bool `json:"lateAssigned,omitempty"`
	// MBMWanted: the pod asked for bandwidth counters (config mbmAssignmentAnnotation), which
	// the counter policy of mbm_event mode gives it first.
	MBMWanted bool `json:"mbmWanted,omitempty"`
	// MBMSince is when the counter policy assigned the group's bandwidth counters, by L3
	// domain id; a domain not listed had them since the group was Created (the kernel
	// assigns at mkdir).
	MBMSince map[string]time.Time `json:"mbmSince,omitempty"`
	// RemoveFailed says why removing the group failed; it is retried, never forgotten.
	RemoveFailed string `json:"removeFailed,omitempty"`
}

// Init is a process by pid and start time (a pid alone is reused).
type Init struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// Store is the state directory.
type Store struct {
	dir string

	waitMu  sync.Mutex
	waiters map[string]*flockWaiter // see flockWaiter
}

const (
	groupsDir     = "groups"
	containersDir = "containers"
	locksDir      = "locks"
)

// Open makes sure the state directory is there, private (0700) and writable. Neither it nor
// its subdirectories may be symlinks: root writes records and locks there, and a link
// planted by someone else would send those writes anywhere.
func Open(dir string) (*Store, error) {
	if err := makePrivateDir(dir); err != nil {
		return nil, err
	}
	for _, d := range []string{groupsDir, containersDir, locksDir, countsDir} {
		if err := makePrivateDir(filepath.Join(dir, d)); err != nil {
			return nil, err
		}
	}
	// access(2) rather than a probe file: one syscall on every hook call, and it still sees
	// a read-only filesystem, which is what stops root.
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return nil, fmt.Errorf("state dir %s is not writable: %w", dir, err)
	}
	return &Store{dir: dir}, nil
}

// Dir is the state directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) recordPath(group string) string {
	return filepath.Join(s.dir, groupsDir, group+".json")
}

// Load reads a group's record; ok is false when the group is not ours.
func (s *Store) Load(group string) (r Record, ok bool, err error) {
	b, err := sysfile.ReadFile(s.recordPath(group), unix.O_NOFOLLOW, maxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("read record of %s: %w", group, err)
	}
	r, err = ParseRecord(b)
	if err != nil {
		return Record{}, false, fmt.Errorf("record of %s: %w", group, err)
	}
	return r, true, nil
}

// maxRecord bounds a record file: a pod's record holds a few lines per container.
const maxRecord = 1 << 20

// ParseRecord parses a record file.
func ParseRecord(b []byte) (Record, error) {
	if len(b) > maxRecord {
		return Record{}, fmt.Errorf("record is larger than 1 MiB")
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("parse record: %w", err)
	}
	if r.Group == "" || strings.ContainsAny(r.Group, "/\x00") || r.Group == "." || r.Group == ".." {
		return Record{}, fmt.Errorf("record names no valid group: %q", r.Group)
	}
	if r.Containers == nil {
		r.Containers = map[string]time.Time{}
	}
	cleanNames(&r)
	return r, nil
}

// OpenReadOnly opens the state directory for reading only (status, the exporter): it
// creates nothing, takes no lock and writes nothing, so it is safe beside running hooks.
// Records are replaced by rename, so a reader never sees half of one.
func OpenReadOnly(dir string) (*Store, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	return &Store{dir: dir}, nil
}

// makePrivateDir creates dir 0700 if missing and refuses one that is not a real directory;
// one that exists already is checked as ownPrivate says.
func makePrivateDir(dir string) error {
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(dir), 0o755); err == nil {
			err = os.Mkdir(dir, 0o700)
		}
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("state dir: %w", err)
	}
	if err := checkDir(dir); err != nil {
		return err
	}
	return ownPrivate(dir)
}

// checkDir refuses a path that is a symlink or not a directory.
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("state dir %s is a symlink: refused (records and locks are never written through a link)", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("state dir %s is not a directory", dir)
	}
	return nil
}

// save writes a record atomically. Compact, one line and a newline: a record is written and
// read back at every container's start and stop, where indentation is bytes to encode and
// parse again that nobody reads there; `status` and `jq .` show it to people.
func (s *Store) save(r Record) error {
	if r.Containers == nil {
		r.Containers = map[string]time.Time{}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("record of %s: %w", r.Group, err)
	}
	// A reader sees the old record or the new one, never half.
	if err := sysfile.WriteAtomic(s.recordPath(r.Group), append(b, '\n')); err != nil {
		return fmt.Errorf("record of %s: %w", r.Group, err)
	}
	return nil
}

// delete forgets a group.
func (s *Store) delete(group string) error {
	if err := os.Remove(s.recordPath(group)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("forget %s: %w", group, err)
	}
	return nil
}

// List returns every record, sorted by group. Unreadable records are reported, not skipped
// silently, and the others are still returned.
func (s *Store) List() ([]Record, error) {
	es, err := os.ReadDir(filepath.Join(s.dir, groupsDir))
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	var out []Record
	var errs []error
	for _, e := range es {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(name, ".") {
			continue
		}
		r, found, err := s.Load(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if found {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out, errors.Join(errs...)
}

// BindContainer remembers which group a container is in, so poststop finds it by id even
// when the runtime does not repeat the annotations. The binding is a symlink whose target
// is the group's name, never followed: one system call to make and one to read, on every
// container's start and stop (a file written by rename took four, and four to read).
func (s *Store) BindContainer(id, group string) error {
	if err := checkContainerID(id); err != nil {
		return fmt.Errorf("bind container: %w", err)
	}
	if group == "" || strings.ContainsAny(group, "/\x00") || len(group) >= maxBinding {
		return fmt.Errorf("bind container %s: %q is not a group name", id, group)
	}
	path := filepath.Join(s.dir, containersDir, id)
	err := unix.Symlink(group, path)
	if errors.Is(err, unix.EEXIST) {
		// Bound already (a repeated event, a restarted container): replace it whole.
		tmp := filepath.Join(s.dir, containersDir, fmt.Sprintf(".tmp-%s-%d", id, rand.Uint32()))
		if err = unix.Symlink(group, tmp); err == nil {
			if err = unix.Rename(tmp, path); err != nil {
				_ = unix.Unlink(tmp)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("bind container %s: %w", id, err)
	}
	return nil
}

// maxBinding bounds a binding's target: a group name.
const maxBinding = 256

// ContainerGroup returns the group a container was placed in, or "".
func (s *Store) ContainerGroup(id string) (string, error) {
	if err := checkContainerID(id); err != nil {
		return "", fmt.Errorf("container's group: %w", err)
	}
	path := filepath.Join(s.dir, containersDir, id)
	buf := make([]byte, maxBinding)
	n, err := unix.Readlink(path, buf)
	switch {
	case errors.Is(err, unix.ENOENT):
		return "", nil
	case errors.Is(err, unix.EINVAL):
		// Not a symlink: a binding an earlier version wrote as a file holding the name.
		b, err := sysfile.ReadFile(path, unix.O_NOFOLLOW, maxBinding)
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("container %s: %w", id, err)
		}
		return strings.TrimSpace(string(b)), nil
	case err != nil:
		return "", fmt.Errorf("container %s: %w", id, err)
	case n == len(buf):
		return "", fmt.Errorf("container %s: its binding is longer than a group name", id)
	}
	return string(buf[:n]), nil
}

// UnbindContainer forgets a container.
func (s *Store) UnbindContainer(id string) error {
	if err := checkContainerID(id); err != nil {
		return fmt.Errorf("forget container: %w", err)
	}
	if err := os.Remove(filepath.Join(s.dir, containersDir, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("forget container %s: %w", id, err)
	}
	return nil
}

// Containers lists the container ids with a binding.
func (s *Store) Containers() ([]string, error) {
	es, err := os.ReadDir(filepath.Join(s.dir, containersDir))
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	var out []string
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
