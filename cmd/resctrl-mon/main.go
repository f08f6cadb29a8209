// Command resctrl-mon is the operator's tool: `reconcile` puts groups and registry right
// after crashes (no daemon needed; a systemd timer runs it), `status` shows every group,
// `sidecar` exports a container's cgroup v2 pressure from a sidecar in its pod,
// `serve` exports the counters and pressure to Prometheus (serve.go), `top` shows them live
// on a terminal (top.go), `host` puts the OCI hook on the host or takes it off (host.go).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/logging"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/lib/runtimes"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

func main() {
	app := &cli.App{
		Name:    "resctrl-mon",
		Usage:   "per-pod resctrl monitoring groups: repair and inspect",
		Version: config.Version,
		Description: "Every config key is also a global option, given before the command (resctrl-mon --stateDir DIR status): " +
			"it overrides the config file and the key's RESCTRL_MON_ variable. An error is printed on stderr, with exit status 1.",
		Flags: configFlags(),
		Commands: []*cli.Command{
			{
				Name:  "reconcile",
				Usage: "make groups and registry match the live containers (safe while hooks run; idempotent)",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "dry-run", Usage: "say what would be done, change nothing"},
					&cli.BoolFlag{Name: "json", Usage: "print the actions as JSON"},
					&cli.BoolFlag{Name: "adopt", Usage: "after the state dir was lost: take as ours every group of a live pod's name that holds the pod's tasks (without it, a group with no record is never touched: another tool may name groups by pod UID too)"},
					&cli.BoolFlag{Name: "if-mounted", Usage: "when resctrl is not mounted at resctrlRoot, say so and succeed (the systemd unit's mode: the config, not the unit, knows where resctrl is)"},
					everyFlag,
				},
				Action: repeat(reconcile),
			},
			{
				Name:  "status",
				Usage: "show every owned group, RMID use and recent failures; with --pod, one pod's group whole",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"},
					&cli.StringFlag{Name: "pod", Usage: "one pod's group (its UID, or namespace/name): containers, tasks, counters, the lives its snapshots keep, its failures"}},
				Action: status,
			},
			sidecarCommand(),
			serveCommand(),
			topCommand(),
			hostCommand(),
		},
	}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "resctrl-mon:", err)
		os.Exit(1)
	}
}

// open loads the configuration and the manager; the log gets what a CLI user does not read.
func open(c *cli.Context) (*lifecycle.Manager, config.Config, func(), error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, cfg, nil, err
	}
	log, closer, err := logging.Open(cfg.Log, "resctrl-mon", filepath.Join(cfg.StateDir, "resctrl-mon.log"))
	if err != nil {
		log, closer = slog.New(slog.NewTextHandler(os.Stderr, nil)), io.NopCloser(nil)
	}
	m, err := lifecycle.New(cfg, log, kernel.Open)
	if err != nil {
		_ = closer.Close()
		return nil, cfg, nil, err
	}
	return m, cfg, func() { _ = closer.Close() }, nil
}

func reconcile(c *cli.Context) error {
	m, cfg, done, err := open(c)
	if errors.Is(err, resctrlfs.ErrNotMounted) && c.Bool("if-mounted") {
		// A host without RDT, or one that has not mounted resctrl yet: nothing to reconcile,
		// and not a failure of the timer's unit.
		if c.Bool("json") {
			return writeJSON(c.App.Writer, map[string]any{"dryRun": c.Bool("dry-run"), "resctrlMounted": false, "resctrlRoot": cfg.ResctrlRoot, "actions": []vocab.Action{}})
		}
		fmt.Fprintf(c.App.Writer, "resctrl not mounted at %s (config key resctrlRoot): nothing to reconcile\n", cfg.ResctrlRoot)
		return nil
	}
	if err != nil {
		return err
	}
	defer done()
	m.CountAs(vocab.SourceReconcile)
	live, lerr := runtimes.Live(cfg.RuntimeRoots)
	acts, err := m.Reconcile(live, lifecycle.ReconcileOptions{DryRun: c.Bool("dry-run"), Adopt: c.Bool("adopt")})
	if !c.Bool("dry-run") {
		// The housekeeping the hooks leave to poststop: snapshot pruning, failed removals.
		_, serr := m.Sweep()
		err = errors.Join(err, serr)
	}
	if c.Bool("json") {
		if err := writeJSON(c.App.Writer, map[string]any{"dryRun": c.Bool("dry-run"), "liveContainers": len(live), "actions": acts}); err != nil {
			return err
		}
	} else {
		w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "ACTION\tGROUP\tPOD\tDETAIL\n")
		for _, a := range acts {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", a.Action, a.Group, dash(a.Pod), a.Detail)
		}
		_ = w.Flush()
		verb := "done"
		if c.Bool("dry-run") {
			verb = "planned (dry run)"
		}
		fmt.Fprintf(c.App.Writer, "%d live containers, %d actions %s\n", len(live), len(acts), verb)
	}
	if lerr != nil {
		fmt.Fprintln(c.App.ErrWriter, "resctrl-mon: some runtime state could not be read:", lerr)
	}
	return err
}

// openInventory is the read side the configuration names: status and top read through it.
func openInventory(c *cli.Context) (*inventory.Inventory, error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, err
	}
	return inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
}

func status(c *cli.Context) error {
	if c.IsSet("pod") {
		return podStatus(c)
	}
	inv, err := openInventory(c)
	if err != nil {
		return err
	}
	st, err := inv.Status()
	if c.Bool("json") {
		if jerr := writeJSON(c.App.Writer, st); jerr != nil {
			return jerr
		}
		return err
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "POD\tNAMESPACE/NAME\tGROUP\tCLASS\tCONTAINERS\tTASKS\tAGE\tSTATE\tDETAIL\n")
	for _, g := range st.Groups {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", dash(g.PodUID), dash(nsName(g)), g.Path, dash(g.Class),
			len(g.Containers), g.Tasks, g.Age.Round(time.Second), g.State, g.Detail)
	}
	_ = w.Flush()
	fmt.Fprintf(c.App.Writer, "RMIDs: %d of %d in use\n", st.RMIDs.Used, st.RMIDs.Total)
	printAssignment(c.App.Writer, st.MBM)
	if len(st.Failures) == 0 {
		fmt.Fprintf(c.App.Writer, "failures in the last %s: none\n", inventory.FailureWindow)
	} else {
		fmt.Fprintf(c.App.Writer, "failures in the last %s:", inventory.FailureWindow)
		for _, reason := range slices.Sorted(maps.Keys(st.Failures)) {
			fmt.Fprintf(c.App.Writer, " %s %d", reason, st.Failures[reason])
		}
		fmt.Fprintln(c.App.Writer)
		for _, f := range st.Recent {
			fmt.Fprintf(c.App.Writer, "  %s %s %s: %s\n", f.Time.Format(time.RFC3339), f.Reason, f.Subject, f.Error)
		}
	}
	printCounts(c.App.Writer, st.Counts)
	return err
}

// printAssignment says how the kernel counts bandwidth (Linux ≥ 6.18): in mbm_event mode only
// groups holding a counter count, so the free counters of each domain are shown.
func printAssignment(w io.Writer, a *resctrlfs.Assignment) {
	switch {
	case a == nil:
	case !a.Counting():
		fmt.Fprintf(w, "bandwidth counters: %s mode, every group counts\n", dash(a.Mode))
	default:
		var per []string
		for _, id := range slices.Sorted(maps.Keys(a.Counters)) {
			per = append(per, fmt.Sprintf("domain %s: %d of %d free", id, a.Available[id], a.Counters[id]))
		}
		fmt.Fprintf(w, "bandwidth counters (mbm_event mode, groups without one read Unassigned): %s\n", strings.Join(per, ", "))
	}
}

// printCounts says what each front end did since the state dir was made, a line each:
// "hook: created 3, joined 9, left 12".
func printCounts(w io.Writer, counts map[string]uint64) {
	bySource := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		source, what, ok := strings.Cut(name, ".")
		if ok && counts[name] > 0 {
			bySource[source] = append(bySource[source], fmt.Sprintf("%s %d", what, counts[name]))
		}
	}
	if len(bySource) == 0 {
		return
	}
	fmt.Fprintln(w, "since the state dir was made:")
	for _, source := range slices.Sorted(maps.Keys(bySource)) {
		fmt.Fprintf(w, "  %s: %s\n", source, strings.Join(bySource[source], ", "))
	}
}

func nsName(g inventory.Pod) string {
	if g.Namespace == "" && g.PodName == "" {
		return ""
	}
	return g.Namespace + "/" + g.PodName
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
