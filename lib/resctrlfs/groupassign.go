package resctrlfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// assignmentsFile is a group's list of counter assignments in mbm_event mode:
// "<event>:<domain>=<state>;..." a line per event, state "e" (a counter) or "_" (none).
const assignmentsFile = "mbm_L3_assignments"

// GroupAssignment is a group's mbm_L3_assignments.
type GroupAssignment struct {
	// Events are the events listed, each of which takes a counter of its own.
	Events []string
	// Assigned lists the events that hold a counter, by L3 domain id (DomainID's form).
	Assigned map[string][]string
}

// ReadGroupAssignment reads the group at path (below root)'s mbm_L3_assignments.
func ReadGroupAssignment(root, path string) (GroupAssignment, error) {
	b, err := readInfo(filepath.Join(root, path, assignmentsFile))
	if err != nil {
		return GroupAssignment{}, err
	}
	a, err := ParseGroupAssignment(b)
	if err != nil {
		return GroupAssignment{}, fmt.Errorf("%s: %w", filepath.Join(root, path, assignmentsFile), err)
	}
	return a, nil
}

// ParseGroupAssignment parses mbm_L3_assignments as the kernel shows it
// ("mbm_total_bytes:0=e;1=_\n"). A state other than "e" and "_" is refused: a kernel that
// adds one means something this code does not know.
func ParseGroupAssignment(b []byte) (GroupAssignment, error) {
	out := map[string][]string{}
	var events []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		event, rest, ok := strings.Cut(line, ":")
		if !ok || event == "" || !validModeName(event) {
			return GroupAssignment{}, fmt.Errorf("%q is not <event>:<domain>=<state>[;<domain>=<state>]", line)
		}
		if slices.Contains(events, event) {
			return GroupAssignment{}, fmt.Errorf("event %s twice", event)
		}
		events = append(events, event)
		for item := range strings.SplitSeq(rest, ";") {
			id, state, ok := strings.Cut(item, "=")
			d, err := strconv.ParseUint(id, 10, 32)
			if !ok || err != nil {
				return GroupAssignment{}, fmt.Errorf("%s: %q is not <domain id>=<state>", event, item)
			}
			switch state {
			case "e":
				key := strconv.FormatUint(d, 10)
				out[key] = append(out[key], event)
			case "_":
			default:
				return GroupAssignment{}, fmt.Errorf("%s: %q: state %q is neither e nor _", event, item, state)
			}
		}
	}
	return GroupAssignment{Events: events, Assigned: out}, nil
}

// WriteAssignment writes one line ("mbm_total_bytes:0=e") to the group at path (below root)'s
// mbm_L3_assignments. The kernel says why it refused in last_cmd_status ("Failed to allocate
// counter for mbm_total_bytes in domain 0", "mbm_event mode is not enabled"): the error carries it.
func WriteAssignment(root, path, line string) error {
	file := filepath.Join(root, path, assignmentsFile)
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("assign %q to %s: %w", line, path, err)
	}
	// One write(2) with the newline the kernel requires.
	_, err = f.Write([]byte(line + "\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if s := LastCmdStatus(root); s != "" && s != "ok" {
			return fmt.Errorf("assign %q to %s: %w (resctrl: %s)", line, path, err, s)
		}
		return fmt.Errorf("assign %q to %s: %w", line, path, err)
	}
	return nil
}
