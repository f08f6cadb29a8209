package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/hostinstall"
	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// The flags of `host uninstall` beyond where the files are. The chart's cleanup (a Helm
// post-delete hook, templates/cleanup-*.yaml) runs it once per node at `helm uninstall`,
// and never otherwise: --unless-daemonset, the guess an older chart made in every pod's
// preStop, is kept for compatibility only. Made afresh for each command: urfave/cli writes
// into a flag as it parses.
const (
	unlessDaemonSetFlag = "unless-daemonset"
	apiServerFlag       = "api-server"
	releaseGroupsFlag   = "release-groups"
	runtimeConfigFlag   = "runtime-config"
	waitPlacersFlag     = "wait-placers"
	eventNodeFlag       = "event-node"
	noFilesFlag         = "no-files"
	procFlag            = "proc"
	serviceAccountFlag  = "service-account-dir"
)

func uninstallFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{
			Name:  runtimeConfigFlag,
			Value: cli.NewStringSlice(hostinstall.DefaultRuntimeConfigs...),
			Usage: "host `path` of a runtime's config, or a directory of drop-ins (every file in it): while one names a file install wrote (the wrapper, as BinaryName or runtime_path), or cannot be read, remove nothing and say what to change; repeat for several; one empty value: check none",
		},
		&cli.DurationFlag{
			Name:  waitPlacersFlag,
			Usage: "first wait up to this `long` until no resctrl-mon-nri, reconcile loop, hook or wrapper runs on the host (its /proc; hostPID in a pod), so no group is made behind the release; still one there: keep everything",
		},
		&cli.BoolFlag{
			Name:  releaseGroupsFlag,
			Usage: "also end every group resctrl-mon owns (final counts to the .end snapshots; the tasks go on in the parent group), so no RMID outlives resctrl-mon; not when anything is kept",
		},
		&cli.StringFlag{
			Name:  eventNodeFlag,
			Usage: "also post the decision as an Event on this `node` (ResctrlMonUninstall or ResctrlMonKept, namespace default), best effort, with the pod's service account",
		},
		&cli.BoolFlag{
			Name:  noFilesFlag,
			Usage: "take no file off the host, only the groups (--release-groups): the chart's mode nri without the wrapper installs none, and mounts none",
		},
		&cli.StringFlag{
			Name:  unlessDaemonSetFlag,
			Usage: "`NAMESPACE/NAME` of a DaemonSet: go on only when the API server says it is gone (404) or being deleted; any other answer (401, 403, 5xx, no answer within 10 s, a TLS error): keep everything. For compatibility: the chart no longer uses it",
		},
		apiFlag(),
		&cli.StringFlag{Name: procFlag, Value: "/proc", Hidden: true},
		saFlag(),
	}
}

func apiFlag() cli.Flag {
	return &cli.StringFlag{
		Name:  apiServerFlag,
		Usage: "the API server's `URL` (default: the pod's KUBERNETES_SERVICE_HOST and _PORT), with the pod's service account",
	}
}

// saFlag says where the service account is; tests give their own.
func saFlag() cli.Flag {
	return &cli.StringFlag{Name: serviceAccountFlag, Value: kubeapi.ServiceAccountDir, Hidden: true}
}

// leaving says whether the pod stops for good: the DaemonSet that runs it is gone. Without
// --unless-daemonset it always is (an operator's own uninstall, or the chart's cleanup).
func leaving(c *cli.Context) (bool, string) {
	ds := c.String(unlessDaemonSetFlag)
	if ds == "" {
		return true, "no --unless-daemonset"
	}
	ns, name, ok := strings.Cut(ds, "/")
	if !ok || ns == "" || name == "" {
		return false, fmt.Sprintf("--unless-daemonset %q: want NAMESPACE/NAME", ds)
	}
	client, err := kubeapi.InCluster(c.String(apiServerFlag), c.String(serviceAccountFlag), os.Getenv)
	if err != nil {
		return false, err.Error()
	}
	ctx, cancel := context.WithTimeout(c.Context, kubeapi.Timeout)
	defer cancel()
	p, why, err := client.DaemonSet(ctx, ns, name)
	if err != nil {
		return false, err.Error()
	}
	return p == kubeapi.Gone, why
}

// waitPlacers waits until no placer runs, up to --wait-placers; it says who is left.
func waitPlacers(c *cli.Context) error {
	limit := c.Duration(waitPlacersFlag)
	if limit <= 0 {
		return nil
	}
	deadline := time.Now().Add(limit)
	said := false
	for {
		left, err := hostinstall.Placers(c.String(procFlag))
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		var names []string
		for _, p := range left {
			names = append(names, fmt.Sprintf("%s (pid %d)", p.Cmd, p.PID))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still running after %s: %s, which could make groups behind the release", limit, strings.Join(names, ", "))
		}
		if !said {
			fmt.Fprintf(c.App.Writer, "waiting up to %s for %s to end\n", limit, strings.Join(names, ", "))
			said = true
		}
		select {
		case <-c.Done():
			return c.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// releaseGroups ends every owned group (lifecycle.ReleaseAll) and says what it did. A node
// whose resctrl is not mounted has none.
func releaseGroups(c *cli.Context) (int, error) {
	m, cfg, done, err := open(c)
	if errors.Is(err, resctrlfs.ErrNotMounted) {
		fmt.Fprintf(c.App.Writer, "resctrl not mounted at %s: no group to release\n", cfg.ResctrlRoot)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer done()
	steps, err := m.ReleaseAll()
	for _, s := range steps {
		fmt.Fprintf(c.App.Writer, "%s %s (pod %s) %s\n", s.Action, s.Group, dash(s.Pod), s.Detail)
	}
	if err == nil && len(steps) == 0 {
		fmt.Fprintln(c.App.Writer, "no group to release")
	}
	return len(steps), err
}

// decisions prints what uninstall decided on stdout (kubectl logs) and, with --event-node,
// posts it on the Node; an Event that cannot be posted is said and passed over.
type decisions struct {
	c      *cli.Context
	node   string
	client *kubeapi.Client
}

func newDecisions(c *cli.Context) *decisions {
	d := &decisions{c: c, node: c.String(eventNodeFlag)}
	if d.node == "" {
		return d
	}
	client, err := kubeapi.InCluster(c.String(apiServerFlag), c.String(serviceAccountFlag), os.Getenv)
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "resctrl-mon: no Event on node %s: %v\n", d.node, err)
		return d
	}
	d.client = client
	return d
}

func (d *decisions) say(reason, message string) {
	fmt.Fprintf(d.c.App.Writer, "%s: %s\n", reason, message)
	if d.client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(d.c.Context, kubeapi.Timeout)
	defer cancel()
	if err := d.client.NodeEvent(ctx, d.node, reason, message, time.Now()); err != nil {
		fmt.Fprintf(d.c.App.ErrWriter, "resctrl-mon: the Event on node %s was not posted (the decision stands): %v\n", d.node, err)
	}
}
