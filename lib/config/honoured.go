package config

import "slices"

// Honoured reports whether a pod-set annotation is believed for a pod of namespace ns, given
// the namespaces the admin listed for it (annotations.optOutNamespaces,
// mbmAssignmentNamespaces). An empty list honours every pod, as a single-tenant node wants;
// with a list, a container with no namespace (plain runc, podman) is not in it, as with
// namespaces.include.
func Honoured(namespaces []string, ns string) bool {
	return len(namespaces) == 0 || (ns != "" && slices.Contains(namespaces, ns))
}
