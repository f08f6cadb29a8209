package lifecycle

import (
	"slices"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
)

// containerPrefix names groups of single containers. runc ≥ 1.4 and crun ≥ 1.24 create
// <class>/mon_groups/<container-id> by themselves (linux.intelRdt.enableMonitoring; the class is
// the root for closID "/"); the prefix keeps ours apart from theirs.
const containerPrefix = "ctr-"

// groupName decides which group a container goes to; "" means it is not monitored, and
// why says so.
func groupName(cfg config.Config, id string, idn identity.Identity, annotations map[string]string) (name, why string) {
	if a := cfg.Annotations.OptOut; a != "" && annotations[a] == "true" && optOutRefused(cfg, idn, annotations) == "" {
		return "", "opted out by " + a
	}
	if a := cfg.Annotations.OptIn; a != "" && annotations[a] != "true" {
		return "", "not opted in by " + a
	}
	// An include list names namespaces: a container with none is not in it.
	if inc := cfg.Namespaces.Include; len(inc) > 0 && !slices.Contains(inc, idn.Namespace) {
		return "", "namespace " + idn.Namespace + " not included"
	}
	if idn.Namespace != "" && slices.Contains(cfg.Namespaces.Exclude, idn.Namespace) {
		return "", "namespace " + idn.Namespace + " excluded"
	}
	switch {
	case cfg.Granularity == config.PerContainer:
		return containerPrefix + id, ""
	case idn.PodUID != "":
		return idn.PodUID, ""
	case idn.SandboxID != "":
		return idn.SandboxID, ""
	case cfg.NoPod == config.NoPodSkip:
		return "", "no pod (noPod: skip)"
	}
	return containerPrefix + id, ""
}
