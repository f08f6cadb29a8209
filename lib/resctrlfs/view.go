package resctrlfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// View is the read-only face of the seam: what the read side (lib/inventory, the exporter,
// top) reads of resctrl, and nothing that writes. Reading only, it is safe beside hooks and
// reconcile changing groups, and a test gives it a plain directory laid out as resctrl is
// (a fixture tree) with a mount check that accepts it, so the read side is tested without
// root or FUSE. Like Groups, it names a group by its Addr. It is safe for concurrent use.
type View struct {
	root string
	// counters reads groups' mon_data, listed once for every group of the mount; nodes
	// reads the SNC nodes' files too, with a layout of its own so that neither reader's
	// cache stands for the other's.
	counters MonReader
	nodes    MonReader
}

// OpenView checks root with mount (the front end's choice, MountFor the configuration; nil
// is Check, the kernel's resctrl only) and returns a View of it.
func OpenView(root string, mount Mount) (*View, error) {
	if mount == nil {
		mount = Check
	}
	if err := mount(root); err != nil {
		return nil, err
	}
	return &View{root: root, nodes: MonReader{Subdomains: true}}, nil
}

func (v *View) dir(a Addr) string { return filepath.Join(v.root, a.Path()) }

// Exists reports whether the group at a is there.
func (v *View) Exists(a Addr) bool {
	_, err := os.Stat(v.dir(a))
	return err == nil
}

// Tasks lists the thread ids in the group's tasks file; a group that is gone is an error
// wrapping os.ErrNotExist.
func (v *View) Tasks(a Addr) (map[int]bool, error) {
	b, err := os.ReadFile(filepath.Join(v.dir(a), "tasks"))
	if err != nil {
		return nil, fmt.Errorf("tasks of %s: %w", v.dir(a), err)
	}
	return ParseTasks(b), nil
}

// Counters reads every counter of the group (MonReader.Read); with subdomains, each SNC
// node's files too (MonReader.Subdomains). A group that is gone is an error wrapping
// os.ErrNotExist.
func (v *View) Counters(a Addr, subdomains bool) ([]Reading, []Missing, error) {
	r := &v.counters
	if subdomains {
		r = &v.nodes
	}
	return r.Read(v.dir(a))
}

// Assignment is the mount's counter assignment mode and counters (ReadAssignment).
func (v *View) Assignment() (Assignment, error) { return ReadAssignment(v.root) }

// GroupAssignment is the group's assigned counters in mbm_event mode (ReadGroupAssignment).
func (v *View) GroupAssignment(a Addr) (GroupAssignment, error) {
	return ReadGroupAssignment(v.root, a.Path())
}

// LastCmdStatus is the kernel's word on the last failed command ("" if unreadable).
func (v *View) LastCmdStatus() string { return LastCmdStatus(v.root) }

// numRMIDsFiles are the monitoring resources' num_rmids: L3's, and Intel AET's PERF_PKG
// when it has its own.
var numRMIDsFiles = []string{"info/L3_MON/num_rmids", "info/PERF_PKG_MON/num_rmids"}

// NumRMIDs is how many groups resctrl can have: the smaller positive num_rmids of the
// monitoring resources (a group needs an RMID of each). An error when none gives one.
func (v *View) NumRMIDs() (int, error) {
	total := 0
	for _, f := range numRMIDsFiles {
		b, err := os.ReadFile(filepath.Join(v.root, f))
		if err != nil {
			continue
		}
		if n, ok := ParseNumRMIDs(b); ok && (total == 0 || n < total) {
			total = n
		}
	}
	if total == 0 {
		return 0, fmt.Errorf("resctrl %s: cannot read num_rmids", v.root)
	}
	return total, nil
}

// ParseNumRMIDs parses a num_rmids file. Only a positive count is one: a zero or negative
// one would pass for the machine's total (and a negative one made the use look like room).
func ParseNumRMIDs(b []byte) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil && n > 0
}

// Present is every group in resctrl, ours or not: each holds an RMID.
type Present struct {
	// Classes are the control groups below the root (directories that are not info,
	// mon_groups or mon_data).
	Classes []string
	// Groups are the monitoring groups: the root's mon_groups, then each class's. A class
	// whose mon_groups cannot be listed (it raced away) has none here.
	Groups []Addr
}

// Groups lists the control groups and monitoring groups in resctrl.
func (v *View) Groups() (Present, error) {
	var p Present
	es, err := os.ReadDir(v.root)
	if err != nil {
		return p, fmt.Errorf("resctrl %s: %w", v.root, err)
	}
	for _, e := range es {
		if n := e.Name(); e.IsDir() && n != "info" && n != "mon_groups" && n != "mon_data" {
			p.Classes = append(p.Classes, n)
		}
	}
	for _, class := range append([]string{""}, p.Classes...) {
		mons, _ := os.ReadDir(filepath.Join(v.root, class, "mon_groups"))
		for _, m := range mons {
			p.Groups = append(p.Groups, Addr{Class: class, Name: m.Name()})
		}
	}
	return p, nil
}
