package config

import "slices"

// EveryNamespace in a namespace list (annotations.optOutNamespaces, mbmAssignmentNamespaces)
// honours the annotation for every pod, and for containers with no namespace (plain runc,
// podman): what a single-tenant node wants, and the default of a file that does not name the
// list. An empty list honours no pod: the chart's default, since on a node shared by tenants
// a pod's author must not be believed until the admin says where.
const EveryNamespace = "*"

// Honoured reports whether a pod-set annotation is believed for a pod of namespace ns, given
// the namespaces the admin listed for it. A container with no namespace is honoured only
// under EveryNamespace, as with namespaces.include.
func Honoured(namespaces []string, ns string) bool {
	return slices.Contains(namespaces, EveryNamespace) || (ns != "" && slices.Contains(namespaces, ns))
}
