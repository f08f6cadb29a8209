package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
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
	Version int       `json:"version"` // 2; Read also returns version 1 files
	Kind    Kind      `json:"kind"`
	Time    time.Time `json:"time"`  // RFC 3339 with nanoseconds, UTC
	Group   string    `json:"group"` // directory name
	// Life is when this life of the group began: the registry record's creation time. A
	// group made again under the same name (a pod's sandbox re-created with the same UID)
	// is another life with its own pair of files. Zero in version 1 files, which had none.
	Life     time.Time `json:"life"`
	Path     string    `json:"path"` // below the resctrl root: "mon_groups/<uid>" or "<class>/mon_groups/<uid>"
	Class    string    `json:"class,omitempty"`
	Pod      *Pod      `json:"pod,omitempty"`
	Readings []Reading `json:"readings"` // never null in JSON: [] when there are none
	// Unavailable lists counters that read "Unavailable"/"Error"/"Unassigned" instead of a
	// number: "no sample", never zero. Entries are "domain/name".
	Unavailable []string `json:"unavailable,omitempty"`
}

// Limits of the format.
const (
	// version is what Write writes; Read also accepts legacyVersion.
	version       = 2
	legacyVersion = 1
	// maxSize bounds what Read accepts. A snapshot of a few hundred counters is tens of KiB;
	// anything near this is not one of ours.
	maxSize = 1 << 20
	// maxGroupLen keeps "." + group + "." + life stamp (26) + ".begin.tmp-" + 10 digits
	// (the temp file of Write, 249 bytes at most) under the 255-byte file name limit.
	maxGroupLen = 200
	// tempInfix marks Write's temp files: "." + file name + tempInfix + digits
	// (sysfile.HiddenTemp).
	tempInfix = ".tmp-"
)

// Write stores s as <dir>/<s.Group>.<s.Life stamp>.<s.Kind> (see FileName) atomically: a
// temp file in the same dir (O_EXCL, 0644), fsync, rename, fsync of the dir. Creates dir
// (0755) if missing; refuses a dir that is a symbolic link (ErrSymlinkDir). Sets Version=2 if
// zero and writes no other version. Errors wrapped with %w naming the path.
//
// s.Time must be set (the time the counters were read, which only the caller knows), and
// s.Life (when this life of the group began, the same for its .begin and .end); both are
// stored in UTC. A reading whose value is NaN or infinite is refused: such a counter has no
// sample and belongs in Unavailable.
func Write(dir string, s Snapshot) (path string, err error) {
	if err := validName(s.Group); err != nil {
		return "", fmt.Errorf("snapshot: write in %s: %w", dir, err)
	}
	if err := validKind(s.Kind); err != nil {
		return "", fmt.Errorf("snapshot: write in %s: group %s: %w", dir, s.Group, err)
	}
	if err := validTime("life", s.Life); err != nil {
		return "", fmt.Errorf("snapshot: write in %s: group %s: %w", dir, s.Group, err)
	}
	name := FileName(s.Group, s.Life, s.Kind)
	path = filepath.Join(dir, name)
	data, err := encode(s)
	if err != nil {
		return "", fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	d, err := openDir(dir, true)
	if err != nil {
		return "", fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	defer d.Close()
	// Readable by consumers in other containers, running as other users; the temp file
	// hidden (leading '.') from their glob of *.end, and named as isTemp parses it.
	o := sysfile.Atomic{Mode: 0o644, Durable: true, TempName: sysfile.HiddenTemp}
	if err := sysfile.WriteAtomicAt(int(d.Fd()), d.Name(), name, data, o); err != nil {
		return "", fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	return path, nil
}

// encode normalizes s the way Write stores it and returns the file content.
func encode(s Snapshot) ([]byte, error) {
	if s.Version == 0 {
		s.Version = version
	}
	// Version 1 files are read, never written: they cannot tell a group's lives apart.
	if s.Version != version {
		return nil, fmt.Errorf("version %d: only version %d is written", s.Version, version)
	}
	s.Time = s.Time.UTC()
	s.Life = s.Life.UTC()
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

// validate checks what both Write and Read require of a snapshot, and clears what version 1
// did not have.
func validate(s *Snapshot) error {
	switch s.Version {
	case version:
		if err := validTime("life", s.Life); err != nil {
			return err
		}
	case legacyVersion:
		// Version 1 had no life: a "life" in such a file is a field it does not define.
		s.Life = time.Time{}
	default:
		return fmt.Errorf("unsupported version %d, want %d (or %d)", s.Version, version, legacyVersion)
	}
	if err := validKind(s.Kind); err != nil {
		return err
	}
	if err := validName(s.Group); err != nil {
		return err
	}
	if err := validTime("time", s.Time); err != nil {
		return err
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
			return fmt.Errorf("unavailable %d: %q is not \"domain/name\"", i, clip.String(u))
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
		return fmt.Errorf("%q contains '/'", clip.String(p))
	}
	return nil
}
