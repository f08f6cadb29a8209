package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
)

// The flags that make `host uninstall` the DaemonSet pod's preStop: it runs whenever the pod
// stops, and only an uninstall may take anything away.
var (
	unlessDaemonSetFlag = &cli.StringFlag{
		Name:  "unless-daemonset",
		Usage: "`NAMESPACE/NAME` of the DaemonSet running this pod: while the API server shows it (a pod replaced, an upgrade, a drain), do nothing; only when it is gone (an uninstall) go on. No answer from the API server: do nothing",
	}
	apiServerFlag = &cli.StringFlag{
		Name:  "api-server",
		Usage: "with --unless-daemonset: the API server's `URL` (default: the pod's KUBERNETES_SERVICE_HOST and _PORT), with the pod's service account",
	}
	releaseGroupsFlag = &cli.BoolFlag{
		Name:  "release-groups",
		Usage: "also end every group resctrl-mon owns (final counts to the .end snapshots; the tasks go on in the parent group), so no RMID outlives resctrl-mon",
	}
)

// leaving says whether the pod stops for good: the DaemonSet that runs it is gone. Without
// --unless-daemonset it always is (an operator's own uninstall).
func leaving(c *cli.Context) (bool, string) {
	ds := c.String(unlessDaemonSetFlag.Name)
	if ds == "" {
		return true, "no --unless-daemonset"
	}
	ns, name, ok := strings.Cut(ds, "/")
	if !ok || ns == "" || name == "" {
		return false, fmt.Sprintf("--unless-daemonset %q: want NAMESPACE/NAME; keeping everything", ds)
	}
	client, err := kubeapi.InCluster(c.String(apiServerFlag.Name), kubeapi.ServiceAccountDir, os.Getenv)
	if err != nil {
		return false, err.Error() + "; keeping everything"
	}
	ctx, cancel := context.WithTimeout(c.Context, 10*time.Second)
	defer cancel()
	p, why, err := client.DaemonSet(ctx, ns, name)
	if err != nil {
		return false, err.Error() + "; keeping everything"
	}
	return p == kubeapi.Gone, why
}

// releaseGroups ends every owned group (lifecycle.ReleaseAll) and says what it did.
func releaseGroups(c *cli.Context) error {
	m, _, done, err := open(c)
	if err != nil {
		return err
	}
	defer done()
	steps, err := m.ReleaseAll()
	for _, s := range steps {
		fmt.Fprintf(c.App.Writer, "%s %s (pod %s) %s\n", s.Action, s.Group, dash(s.Pod), s.Detail)
	}
	if err == nil && len(steps) == 0 {
		fmt.Fprintln(c.App.Writer, "no group to release")
	}
	return err
}
