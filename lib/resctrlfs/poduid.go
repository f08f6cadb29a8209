package resctrlfs

import "strings"

// ValidPodUID reports whether s is a Kubernetes pod UID, in any case: the 8-4-4-4-12 hex form
// or the same 32 hex digits without dashes (the form a systemd cgroup name carries). It is the
// key goresctrl's pkg/monitor validates as a pod UID; lib/resctrlfs/kernel's tests hold the
// two to the same answers, so the group names the library owns are the ones goresctrl takes.
func ValidPodUID(s string) bool {
	switch len(s) {
	case 36:
		for i, part := range strings.Split(s, "-") {
			if i > 4 || len(part) != [5]int{8, 4, 4, 4, 12}[i] || !isHex(part) {
				return false
			}
		}
		return strings.Count(s, "-") == 4
	case 32:
		return isHex(s)
	}
	return false
}

// CanonicalPodUID is a pod UID as the project names its group: lower case, with dashes.
// Anything else is returned lower-cased (as goresctrl's CanonicalizePodUID).
func CanonicalPodUID(s string) string {
	s = strings.ToLower(s)
	if len(s) != 32 || !isHex(s) {
		return s
	}
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}
