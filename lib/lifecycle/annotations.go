package lifecycle

import (
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// A pod's author sets its annotations, not the node's admin: on a node shared by tenants the
// opt-out would let a noisy neighbour hide from attribution, and the bandwidth annotation would
// let any pod take the few assignable counters. The admin lists the namespaces where each is
// believed (config.Honoured); elsewhere it is ignored, and the refusal counted.

// optOutRefused is the opt-out annotation's name when the container asks to opt out from a
// namespace where that is not honoured, else "".
func optOutRefused(cfg config.Config, idn identity.Identity, annotations map[string]string) string {
	if a := cfg.Annotations.OptOut; a != "" && annotations[a] == "true" && !config.Honoured(cfg.Annotations.OptOutNamespaces, idn.Namespace) {
		return a
	}
	return ""
}

// mbmWanted says whether the pod asked for bandwidth counters and may have them first; refused
// is the annotation's name when it asked from a namespace where that is not honoured (under
// mbmAssignment: policy only: the kernel's own assignment reads no annotation).
func mbmWanted(cfg config.Config, idn identity.Identity, annotations map[string]string) (wanted bool, refused string) {
	a := cfg.MBMAssignmentAnnotation
	if a == "" || annotations[a] != "true" {
		return false, ""
	}
	if config.Honoured(cfg.MBMAssignmentNamespaces, idn.Namespace) {
		return true, ""
	}
	if cfg.MBMAssignment == config.MBMAssignPolicy {
		return false, a
	}
	return false, ""
}

// annotationRefused logs and counts an annotation ignored for its namespace
// (resctrl_mon_failures_total{reason="annotation"}). It is kept out of the failure log: a
// tenant annotating many pods must not push the node's real failures out of status.
func (m *Manager) annotationRefused(p Placement, annotation string) {
	m.log.Warn("annotation not honoured in this namespace", "annotation", annotation, "container", p.ContainerID,
		"pod", p.Pod.PodUID, "namespace", p.Pod.Namespace)
	if err := m.store.Count(vocab.FailureCount(vocab.FailAnnotation)); err != nil {
		m.log.Warn("counting a refused annotation", "err", err)
	}
}
