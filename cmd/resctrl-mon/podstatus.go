package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// podStatus is `status --pod`: one pod's group whole, what a pod's owner asks about (the
// kubectl plugin runs it on the pod's node).
func podStatus(c *cli.Context) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	inv, err := inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
	if err != nil {
		return err
	}
	st, err := inv.PodStatus(c.String("pod"), cfg.SnapshotDir)
	if st.Pod.Group == "" {
		return err
	}
	if c.Bool("json") {
		if jerr := writeJSON(c.App.Writer, st); jerr != nil {
			return jerr
		}
		return err
	}
	printPodStatus(c.App.Writer, st, cfg.SnapshotDir)
	return err
}

func printPodStatus(out io.Writer, st inventory.PodStatus, snapshotDir string) {
	p := st.Pod
	fmt.Fprintf(out, "pod %s (uid %s)\n", dash(nsName(p)), dash(p.PodUID))
	fmt.Fprintf(out, "group %s, class %s, %s", p.Path, dash(p.Class), p.State)
	if p.Detail != "" {
		fmt.Fprintf(out, " (%s)", p.Detail)
	}
	fmt.Fprintf(out, ", since %s (%s), %d tasks\n", p.Created.Format(time.RFC3339), p.Age.Round(time.Second), p.Tasks)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "CONTAINER\tNAME\tPLACED\n")
	for _, ctr := range p.Containers {
		fmt.Fprintf(w, "%s\t%s\t%s\n", ctr.ID, dash(ctr.Name), ctr.Placed.Format(time.RFC3339))
	}
	_ = w.Flush()
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "DOMAIN\tCOUNTER\tVALUE\tUNIT\n")
	for _, r := range p.Readings {
		fmt.Fprintf(w, "%s\t%s\t%v\t%s\n", r.Domain, r.Name, r.Value, r.Unit)
	}
	for _, m := range p.Missing {
		fmt.Fprintf(w, "%s\t%s\t%s\t\n", m.Domain, m.Name, m.Reason)
	}
	_ = w.Flush()
	switch {
	case snapshotDir == "":
		fmt.Fprintln(out, "lives: no snapshot directory configured")
	case len(st.Lives) == 0:
		fmt.Fprintf(out, "lives: none in %s\n", snapshotDir)
	default:
		fmt.Fprintf(out, "lives (snapshots in %s):\n", snapshotDir)
		for _, l := range st.Lives {
			end := "going on"
			if l.Ended {
				end = "ended"
			}
			fmt.Fprintf(out, "  began %s, %s\n", l.Began.Format(time.RFC3339), end)
		}
	}
	if len(st.Failures) == 0 {
		fmt.Fprintln(out, "failures: none recorded")
		return
	}
	fmt.Fprintln(out, "failures:")
	for _, f := range st.Failures {
		fmt.Fprintf(out, "  %s %s %s: %s\n", f.Time.Format(time.RFC3339), f.Reason, f.Subject, f.Error)
	}
}
