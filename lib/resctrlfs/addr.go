package resctrlfs

import (
	"fmt"
	"strings"
)

// Addr is where a monitoring group is: its class (the control group it sits under; "" for the
// root group) and its name in that class's mon_groups. It is the one way the project names a
// group to resctrl, whether it writes the group or reads it.
type Addr struct {
	Class string
	Name  string
}

// Path is the group's path below the resctrl root.
func (a Addr) Path() string { return GroupPath(a.Class, a.Name) }

func (a Addr) String() string { return a.Path() }

// ParseAddr reads a group's path below the resctrl root ("mon_groups/<name>" or
// "<class>/mon_groups/<name>"), as Path writes it.
func ParseAddr(path string) (Addr, error) {
	f := strings.Split(path, "/")
	switch {
	case len(f) == 2 && f[0] == "mon_groups" && f[1] != "":
		return Addr{Name: f[1]}, nil
	case len(f) == 3 && f[0] != "" && f[1] == "mon_groups" && f[2] != "":
		return Addr{Class: f[0], Name: f[2]}, nil
	}
	return Addr{}, fmt.Errorf("resctrl group path %q: want mon_groups/<name> or <class>/mon_groups/<name>", path)
}
