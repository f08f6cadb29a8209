package hostinstall

import (
	"fmt"
	"os"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
)

// runtimeCandidates are where distributions put the OCI runtimes the wrapper can run: Debian
// and Ubuntu /usr/sbin/runc, RHEL and Fedora /usr/bin/runc and /usr/bin/crun (crun being the
// default of recent RHEL and OpenShift), a hand or package install under /usr/local.
var runtimeCandidates = []string{
	"/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc",
	"/usr/bin/crun", "/usr/local/bin/crun",
}

// checkRuntime refuses an install of the wrapper whose config names a runtime that is not an
// executable file on this node: every container of the runtime handler would then fail to
// start, one at a time, far from this install's log. It is not guessed instead: runc and crun
// differ, and which one the node's containers run is the admin's choice. The error names
// what is there to set.
func (h *host) checkRuntime(runtime string) error {
	if h.executable(runtime) {
		return nil
	}
	var found []string
	for _, c := range runtimeCandidates {
		if c != runtime && h.executable(c) {
			found = append(found, c)
		}
	}
	if len(found) == 0 {
		return fmt.Errorf("config key runtime: %s is not an executable file on this node, nor is any of %s: set runtime to the node's runc or crun",
			runtime, strings.Join(runtimeCandidates, ", "))
	}
	return fmt.Errorf("config key runtime: %s is not an executable file on this node; it has %s: set runtime to the one its containers run (Helm: --set config.runtime=%s)",
		runtime, strings.Join(found, ", "), found[0])
}

// executable says whether host path p is (or links to, within the host) an executable file.
func (h *host) executable(p string) bool {
	at, err := securejoin.SecureJoin(h.root, p)
	if err != nil {
		return false
	}
	fi, err := os.Stat(at)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
