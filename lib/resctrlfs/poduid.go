package resctrlfs

import "github.com/intel/goresctrl/pkg/monitor"

// ValidPodUID reports whether s is a Kubernetes pod UID, with or without its dashes, in
// any case: a group name goresctrl's key validation accepts (monitor.PodUIDValidator).
func ValidPodUID(s string) bool { return monitor.PodUIDValidator(s) }

// CanonicalPodUID is a pod UID as the project names its group: lower case, with dashes
// (monitor.CanonicalizePodUID). Anything else is returned lower-cased.
func CanonicalPodUID(s string) string { return monitor.CanonicalizePodUID(s) }
