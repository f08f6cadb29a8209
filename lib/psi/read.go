package psi

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// Reason says why a pressure file could not be read. The values are metric label values.
type Reason string

const (
	// ReasonGone: the cgroup directory is gone (its container ended).
	ReasonGone Reason = "gone"
	// ReasonMissing: the directory is there but the file is not: PSI is off for this cgroup
	// (cgroup.pressure set to 0) or the kernel has none.
	ReasonMissing Reason = "missing"
	// ReasonUnsupported: EOPNOTSUPP, PSI compiled in but disabled (booted with psi=0).
	ReasonUnsupported Reason = "unsupported"
	// ReasonPermission: EACCES or EPERM, e.g. another container's root without ptrace access.
	ReasonPermission Reason = "permission"
	// ReasonFormat: the content is not a pressure file.
	ReasonFormat Reason = "format"
	// ReasonIO: any other error.
	ReasonIO Reason = "io"
)

// Reasons lists every Reason.
func Reasons() []Reason {
	return []Reason{ReasonGone, ReasonMissing, ReasonUnsupported, ReasonPermission, ReasonFormat, ReasonIO}
}

// ReadError is a pressure file that could not be read.
type ReadError struct {
	Path   string
	Reason Reason
	Err    error
}

func (e *ReadError) Error() string { return fmt.Sprintf("read %s (%s): %v", e.Path, e.Reason, e.Err) }
func (e *ReadError) Unwrap() error { return e.Err }

// ReasonOf returns the reason of a ReadError in err's chain, ReasonIO for any other error.
func ReasonOf(err error) Reason {
	if re, ok := errors.AsType[*ReadError](err); ok {
		return re.Reason
	}
	return ReasonIO
}

// maxPressureFile bounds a pressure file: two lines of under a hundred bytes each.
const maxPressureFile = 4096

// Read reads the pressure file of resource r in the cgroup directory dir. Errors are
// *ReadError.
func Read(dir string, r Resource) (Pressure, error) {
	path := filepath.Join(dir, r.File())
	// One open and one read, plain system calls (sysfile): a scrape reads three of these for
	// every pod and container, and the kernel makes the whole text at each read.
	b, err := sysfile.ReadFile(path, 0, maxPressureFile)
	if errors.Is(err, sysfile.ErrTooLong) {
		return Pressure{}, &ReadError{Path: path, Reason: ReasonFormat, Err: err}
	}
	if err != nil {
		return Pressure{}, &ReadError{Path: path, Reason: reasonOfOpen(dir, err), Err: err}
	}
	p, err := Parse(bytes.NewReader(b))
	if err != nil {
		reason := ReasonFormat
		if !errors.Is(err, ErrFormat) {
			reason = reasonOfOpen(dir, err)
		}
		return Pressure{}, &ReadError{Path: path, Reason: reason, Err: err}
	}
	return p, nil
}

// reasonOfOpen classifies an error from opening or reading a pressure file in dir.
// EOPNOTSUPP comes at read(2), not open(2), when PSI is disabled at boot.
func reasonOfOpen(dir string, err error) Reason {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return ReasonGone
		}
		return ReasonMissing
	case errors.Is(err, unix.EOPNOTSUPP):
		return ReasonUnsupported
	case errors.Is(err, fs.ErrPermission):
		return ReasonPermission
	case errors.Is(err, unix.ENODEV):
		// A read from a removed cgroup's file that was open before the rmdir.
		return ReasonGone
	}
	return ReasonIO
}

// ErrNoPSI: the kernel keeps no pressure information.
var ErrNoPSI = errors.New("this kernel keeps no pressure stall information (built without CONFIG_PSI, or booted with psi=0)")

// Available tells whether the kernel keeps pressure information at all, from the
// system-wide <proc>/pressure/cpu: the kernel creates it only when PSI is on, and older
// kernels answer EOPNOTSUPP when it was disabled at boot. Call it once, at start, and say
// so once: every read of every cgroup would fail the same way.
func Available(h cgroup.Host) error {
	_, err := os.ReadFile(filepath.Join(cmp.Or(h.Proc, "/proc"), "pressure", "cpu"))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("%w: %w", ErrNoPSI, err)
	}
	return fmt.Errorf("pressure stall information: %w", err)
}

// Sample is a cgroup's pressure for every resource, read together: the one reading the
// exporter, the sidecar (its metrics and cgroup_monitor_sc's) and top all take.
type Sample struct {
	p   [3]Pressure
	err [3]error
}

// ReadAll reads the pressure file of every resource in the cgroup directory dir.
func ReadAll(dir string) Sample {
	var s Sample
	for i, r := range Resources() {
		s.p[i], s.err[i] = Read(dir, r)
	}
	return s
}

// Get returns resource r's pressure, or why it could not be read (a *ReadError).
func (s Sample) Get(r Resource) (Pressure, error) {
	for i, x := range Resources() {
		if x == r {
			return s.p[i], s.err[i]
		}
	}
	return Pressure{}, &ReadError{Reason: ReasonIO, Err: fmt.Errorf("no resource %q", r)}
}
