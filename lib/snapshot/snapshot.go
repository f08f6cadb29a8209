package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind of a snapshot file.
type Kind string

const (
	Begin Kind = "begin"
	End   Kind = "end"
)

// Pod is the Kubernetes pod a group belongs to.
type Pod struct {
	UID       string `json:"uid"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// Reading is one counter of one monitoring domain.
type Reading struct {
	Domain string  `json:"domain"` // mon_data subdirectory, e.g. "mon_L3_00", "mon_PERF_PKG_00"
	Name   string  `json:"name"`   // counter file, e.g. "mbm_total_bytes", "core_energy"
	Value  float64 `json:"value"`
	Kind   string  `json:"kind"`           // "gauge" or "counter" (cumulative)
	Unit   string  `json:"unit,omitempty"` // UCUM: "By", "J", "nF"
}

// Snapshot is the content of one snapshot file.
type Snapshot struct {
	Version  int       `json:"version"` // 1
	Kind     Kind      `json:"kind"`
	Time     time.Time `json:"time"`  // RFC 3339 with nanoseconds, UTC
	Group    string    `json:"group"` // directory name
	Path     string    `json:"path"`  // below the resctrl root: "mon_groups/<uid>" or "<class>/mon_groups/<uid>"
	Class    string    `json:"class,omitempty"`
	Pod      *Pod      `json:"pod,omitempty"`
	Readings []Reading `json:"readings"` // never null in JSON: [] when there are none
	// Unavailable lists counters that read "Unavailable"/"Error"/"Unassigned" instead of a
	// number: "no sample", never zero. Entries are "domain/name".
	Unavailable []string `json:"unavailable,omitempty"`
}

// Limits of the format.
const (
	version = 1
	// maxSize bounds what Read accepts. A snapshot of a few hundred counters is tens of KiB;
	// anything near this is not one of ours.
	maxSize = 1 << 20
	// maxGroupLen keeps "." + group + ".begin.tmp-" + 10 digits (the temp file of Write)
	// under the 255-byte file name limit, with room to spare.
	maxGroupLen = 200
	// tempInfix marks Write's temp files: "." + group + "." + kind + tempInfix + digits.
	tempInfix = ".tmp-"
)

// Write stores s as <dir>/<s.Group>.<s.Kind> atomically: a temp file in the same dir
// (O_EXCL, 0644), fsync, rename, fsync of the dir. Creates dir (0755) if missing. Sets
// Version=1 if zero. Errors wrapped with %w naming the path.
//
// s.Time must be set (the time the counters were read, which only the caller knows); it is
// stored in UTC. A reading whose value is NaN or infinite is refused: such a counter has no
// sample and belongs in Unavailable.
func Write(dir string, s Snapshot) (path string, err error) {
	if err := validName(s.Group); err != nil {
		return "", fmt.Errorf("snapshot: write in %s: %w", dir, err)
	}
	if err := validKind(s.Kind); err != nil {
		return "", fmt.Errorf("snapshot: write in %s: group %s: %w", dir, s.Group, err)
	}
	path = filepath.Join(dir, fileName(s.Group, s.Kind))
	data, err := encode(s)
	if err != nil {
		return "", fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	if err := writeAtomic(dir, path, data); err != nil {
		return "", fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	return path, nil
}

// encode normalizes s the way Write stores it and returns the file content.
func encode(s Snapshot) ([]byte, error) {
	if s.Version == 0 {
		s.Version = version
	}
	s.Time = s.Time.UTC()
	if s.Readings == nil {
		s.Readings = []Reading{} // consumers get [], never null
	}
	if err := validate(&s); err != nil {
		return nil, err
	}
	// Stricter than Read, which must accept reading kinds a newer writer may add.
	for i, r := range s.Readings {
		if r.Kind != "gauge" && r.Kind != "counter" {
			return nil, fmt.Errorf("reading %d (%s/%s): kind %q, want \"gauge\" or \"counter\"", i, r.Domain, r.Name, r.Kind)
		}
		if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
			return nil, fmt.Errorf("reading %d (%s/%s): value %v is not a number JSON can hold; list the counter in Unavailable", i, r.Domain, r.Name, r.Value)
		}
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return append(data, '\n'), nil
}

// writeAtomic puts data at path so that a reader sees either the old file or the whole new
// one, and the new one survives a crash once this returns.
func writeAtomic(dir, path string, data []byte) (err error) {
	// Hidden (leading '.') so consumers globbing *.end never see it; CreateTemp opens with
	// O_EXCL, so concurrent writers of one file each get their own temp file.
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+tempInfix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// CreateTemp makes 0600; consumers in other containers run as other users.
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	// The rename is durable only once the directory is synced.
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("renamed into place but not durable: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func fileName(group string, kind Kind) string { return group + "." + string(kind) }

// parseName splits a snapshot file name into group and kind.
func parseName(name string) (group string, kind Kind, ok bool) {
	for _, k := range []Kind{Begin, End} {
		if g, found := strings.CutSuffix(name, "."+string(k)); found && validName(g) == nil {
			return g, k, true
		}
	}
	return "", "", false
}

// isTemp reports whether name is one of Write's temp files.
func isTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return false
	}
	i := strings.LastIndex(rest, tempInfix)
	if i < 0 {
		return false
	}
	digits := rest[i+len(tempInfix):]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	_, _, ok = parseName(rest[:i])
	return ok
}

// validName refuses group names that are not a single, visible path component.
func validName(name string) error {
	why := ""
	switch {
	case name == "":
		return errors.New("empty group name")
	case name == "." || name == "..":
		why = "is a special directory name"
	case strings.HasPrefix(name, "."):
		why = "starts with '.' (reserved for temp files)"
	case strings.ContainsRune(name, '/'):
		why = "contains '/'"
	case strings.ContainsRune(name, 0):
		why = "contains NUL"
	case len(name) > maxGroupLen:
		why = fmt.Sprintf("is %d bytes, over %d", len(name), maxGroupLen)
	case !utf8.ValidString(name):
		// JSON would store it mangled, so the file name and its content would disagree.
		why = "is not valid UTF-8"
	default:
		return nil
	}
	return fmt.Errorf("invalid group name %q: %s", clip(name), why)
}

func validKind(k Kind) error {
	if k != Begin && k != End {
		return fmt.Errorf("kind %q, want %q or %q", clip(string(k)), Begin, End)
	}
	return nil
}

// validate checks what both Write and Read require of a snapshot.
func validate(s *Snapshot) error {
	if s.Version != version {
		return fmt.Errorf("unsupported version %d, want %d", s.Version, version)
	}
	if err := validKind(s.Kind); err != nil {
		return err
	}
	if err := validName(s.Group); err != nil {
		return err
	}
	if s.Time.IsZero() {
		return errors.New("time missing")
	}
	// Outside these years RFC 3339, hence JSON, cannot hold the time.
	if y := s.Time.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("time %s out of range", s.Time.UTC().Format(time.RFC3339Nano))
	}
	if s.Pod != nil && s.Pod.UID == "" {
		return errors.New("pod without uid")
	}
	for i, r := range s.Readings {
		if err := validPart(r.Domain); err != nil {
			return fmt.Errorf("reading %d: domain %w", i, err)
		}
		if err := validPart(r.Name); err != nil {
			return fmt.Errorf("reading %d: name %w", i, err)
		}
	}
	for i, u := range s.Unavailable {
		domain, name, ok := strings.Cut(u, "/")
		if !ok || validPart(domain) != nil || validPart(name) != nil {
			return fmt.Errorf("unavailable %d: %q is not \"domain/name\"", i, clip(u))
		}
	}
	return nil
}

// validPart checks a domain or counter name: a sysfs file name, so never empty and never
// containing '/', which also keeps "domain/name" unambiguous.
func validPart(p string) error {
	switch {
	case p == "":
		return errors.New("missing")
	case strings.ContainsRune(p, '/'):
		return fmt.Errorf("%q contains '/'", clip(p))
	}
	return nil
}

// clip shortens outside input quoted in error messages.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
