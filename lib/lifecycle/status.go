package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/state"
)

// GroupStatus is one owned group as status shows it.
type GroupStatus struct {
	Group      string        `json:"group"`
	Path       string        `json:"path"`
	Class      string        `json:"class,omitempty"`
	PodUID     string        `json:"podUID,omitempty"`
	Namespace  string        `json:"namespace,omitempty"`
	PodName    string        `json:"podName,omitempty"`
	Containers int           `json:"containers"`
	Tasks      int           `json:"tasks"`
	Age        time.Duration `json:"age"`
	// State: active (containers running, placed from their first instruction),
	// late-assigned (running, but reconcile placed tasks after they started), idle (no
	// container, kept for the retention window), pending (no group: no free RMID),
	// missing (the group disappeared and reconcile has not re-created it yet).
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
}

// RMIDs is the use of the monitoring ids.
type RMIDs struct {
	Used  int `json:"used"`  // every group holds one: the root, control groups, monitoring groups
	Total int `json:"total"` // num_rmids (the smaller one when PERF_PKG has its own)
}

// Status is where things stand.
type Status struct {
	Groups   []GroupStatus   `json:"groups"`
	RMIDs    RMIDs           `json:"rmids"`
	Failures map[string]int  `json:"failures"` // by reason, over the last FailureWindow
	Recent   []state.Failure `json:"recentFailures"`
}

// FailureWindow is how far back status counts failures.
const FailureWindow = time.Hour

// Status reports every owned group, RMID use and recent failures.
func (m *Manager) Status() (Status, error) {
	var errs []error
	st := Status{Failures: map[string]int{}}
	recs, err := m.store.List()
	errs = append(errs, err)
	now := m.now()
	for _, r := range recs {
		g := GroupStatus{Group: r.Group, Path: r.Path, Class: r.Class, PodUID: r.PodUID, Namespace: r.Namespace,
			PodName: r.PodName, Containers: len(r.Containers), Age: now.Sub(r.Created).Round(time.Second)}
		dir := filepath.Join(m.cfg.ResctrlRoot, r.Path)
		_, statErr := os.Stat(dir)
		switch {
		case r.Pending != "":
			g.State, g.Detail = "pending", r.Pending
		case statErr != nil:
			g.State = "missing"
		case len(r.Containers) == 0:
			g.State = "idle"
			if r.IdleSince != nil {
				g.Detail = "idle for " + now.Sub(*r.IdleSince).Round(time.Second).String()
			}
		case r.LateAssigned:
			g.State = "late-assigned"
		default:
			g.State = "active"
		}
		if r.RemoveFailed != "" {
			g.Detail = strings.TrimSpace(g.Detail + "; removal failed: " + r.RemoveFailed)
		}
		if statErr == nil {
			n, err := taskCount(dir)
			errs = append(errs, err)
			g.Tasks = n
		}
		st.Groups = append(st.Groups, g)
	}
	st.RMIDs, err = m.rmidUse()
	errs = append(errs, err)
	fails, err := m.store.Failures(now.Add(-FailureWindow))
	errs = append(errs, err)
	for _, f := range fails {
		st.Failures[f.Reason]++
	}
	if len(fails) > 10 {
		fails = fails[len(fails)-10:]
	}
	st.Recent = fails
	return st, errors.Join(errs...)
}

// rmidUse counts the groups in resctrl (each holds an RMID) against num_rmids.
func (m *Manager) rmidUse() (RMIDs, error) {
	root := m.cfg.ResctrlRoot
	var r RMIDs
	total := 0
	for _, f := range []string{"info/L3_MON/num_rmids", "info/PERF_PKG_MON/num_rmids"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && (total == 0 || n < total) {
			total = n
		}
	}
	if total == 0 {
		return r, fmt.Errorf("resctrl %s: cannot read num_rmids", root)
	}
	r.Total = total
	r.Used = 1 // the root group
	ctrls := []string{root}
	es, err := os.ReadDir(root)
	if err != nil {
		return r, fmt.Errorf("resctrl %s: %w", root, err)
	}
	for _, e := range es {
		if e.IsDir() && !reservedDir(e.Name()) {
			r.Used++
			ctrls = append(ctrls, filepath.Join(root, e.Name()))
		}
	}
	for _, c := range ctrls {
		mons, _ := os.ReadDir(filepath.Join(c, "mon_groups"))
		r.Used += len(mons)
	}
	return r, nil
}

func reservedDir(name string) bool {
	return name == "info" || name == "mon_groups" || name == "mon_data"
}

// SortGroups orders groups by state then path, for a stable table.
func SortGroups(gs []GroupStatus) {
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].State != gs[j].State {
			return gs[i].State < gs[j].State
		}
		return gs[i].Path < gs[j].Path
	})
}
