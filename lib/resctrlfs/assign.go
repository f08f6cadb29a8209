package resctrlfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Counter assignment (Linux ≥ 6.18). On AMD processors with ABMC the kernel mounts resctrl in
// "mbm_event" mode: a group's mbm_total_bytes and mbm_local_bytes count only while a hardware
// counter is assigned to them (they read "Unassigned" otherwise), and the few counters of each
// L3 domain are listed in info/L3_MON/num_mbm_cntrs and available_mbm_cntrs ("0=32;1=32").

// AssignModeEvent is the mode in which bandwidth counts only with an assigned counter.
const AssignModeEvent = "mbm_event"

// Assignment is what info/L3_MON says of counter assignment.
type Assignment struct {
	// Mode is the current mode ("mbm_event", "default"); "" on a kernel without
	// mbm_assign_mode (before 6.18).
	Mode string `json:"mode"`
	// Counters and Available are num_mbm_cntrs and available_mbm_cntrs by L3 domain id
	// ("0", as DomainID gives it); read in mbm_event mode only (the kernel refuses
	// available_mbm_cntrs otherwise).
	Counters  map[string]int `json:"counters,omitempty"`
	Available map[string]int `json:"available,omitempty"`
}

// Counting reports whether bandwidth counts only where a counter is assigned.
func (a Assignment) Counting() bool { return a.Mode == AssignModeEvent }

// maxInfoFile bounds an info file read here: a domain list is short.
const maxInfoFile = 64 << 10

// ReadAssignment reads the counter assignment state of the resctrl mounted at root. A kernel
// without the interface is no error: its Mode is "".
func ReadAssignment(root string) (Assignment, error) {
	dir := filepath.Join(root, "info", "L3_MON")
	b, err := readInfo(filepath.Join(dir, "mbm_assign_mode"))
	if errors.Is(err, os.ErrNotExist) {
		return Assignment{}, nil
	}
	if err != nil {
		return Assignment{}, err
	}
	var a Assignment
	if a.Mode, _, err = ParseAssignMode(b); err != nil || !a.Counting() {
		return a, err
	}
	for name, dst := range map[string]*map[string]int{"num_mbm_cntrs": &a.Counters, "available_mbm_cntrs": &a.Available} {
		b, err := readInfo(filepath.Join(dir, name))
		if err != nil {
			return a, err
		}
		if *dst, err = ParseDomainCounts(b); err != nil {
			return a, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
	}
	return a, nil
}

func readInfo(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, maxInfoFile+1)
	n, err := f.Read(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if n > maxInfoFile {
		return nil, fmt.Errorf("read %s: longer than %d bytes", path, maxInfoFile)
	}
	return b[:n], nil
}

// ParseAssignMode parses mbm_assign_mode: one mode a line, the current one in brackets
// ("[mbm_event]\ndefault\n").
func ParseAssignMode(b []byte) (current string, modes []string, err error) {
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, bracketed := strings.CutPrefix(line, "[")
		if bracketed {
			var closed bool
			if name, closed = strings.CutSuffix(name, "]"); !closed {
				return "", nil, fmt.Errorf("mbm_assign_mode: %q has no closing bracket", line)
			}
		}
		if !validModeName(name) {
			return "", nil, fmt.Errorf("mbm_assign_mode: %q is not a mode name", line)
		}
		if bracketed {
			if current != "" {
				return "", nil, fmt.Errorf("mbm_assign_mode: two current modes, %q and %q", current, name)
			}
			current = name
		}
		modes = append(modes, name)
	}
	if current == "" {
		return "", nil, errors.New("mbm_assign_mode: no current mode in brackets")
	}
	return current, modes, nil
}

func validModeName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ParseDomainCounts parses "0=30;1=30" (num_mbm_cntrs, available_mbm_cntrs): a count by L3
// domain id, ids in DomainID's canonical form.
func ParseDomainCounts(b []byte) (map[string]int, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, errors.New("no domain")
	}
	out := map[string]int{}
	for item := range strings.SplitSeq(s, ";") {
		id, n, ok := strings.Cut(item, "=")
		d, err := strconv.ParseUint(id, 10, 32)
		if !ok || err != nil {
			return nil, fmt.Errorf("%q is not <domain id>=<count>", item)
		}
		v, err := strconv.ParseUint(n, 10, 31)
		if err != nil {
			return nil, fmt.Errorf("%q: count is not a number", item)
		}
		key := strconv.FormatUint(d, 10)
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("domain %s twice", key)
		}
		out[key] = int(v)
	}
	return out, nil
}
