package identity

import (
	"fmt"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// PodSandbox is what a runtime itself tells an NRI plugin about a pod (NRI's api.PodSandbox):
// kubelet's CRI request as the runtime recorded it. Only these fields are trusted; the pod's
// annotations and labels are the user's and serve the filters only. A plain struct, not
// NRI's type: the hook links this package, and NRI's protobuf registry would cost it at
// every start.
type PodSandbox struct {
	ID        string // the sandbox id
	UID       string
	Namespace string
	Name      string
}

// FromPodSandbox is the identity of a container of the pod an NRI runtime describes. A pod
// without a UID or a sandbox id is refused: every CRI pod has both, so the runtime sent
// something that does not add up.
func FromPodSandbox(p PodSandbox) (Identity, error) {
	if p.UID == "" {
		return Identity{}, fmt.Errorf("%w: the runtime's pod %q has no UID", ErrMismatch, clip.String(p.Name))
	}
	if !resctrlfs.ValidPodUID(p.UID) {
		return Identity{}, fmt.Errorf("%w: pod UID %q is not a pod UID", ErrBadAnnotation, clip.String(p.UID))
	}
	if !IsSandboxID(p.ID) {
		return Identity{}, fmt.Errorf("%w: sandbox id %q is not 64 lowercase hex digits", ErrBadAnnotation, clip.String(p.ID))
	}
	for what, v := range map[string]string{"namespace": p.Namespace, "pod name": p.Name} {
		if v != "" && !isName(v) {
			return Identity{}, fmt.Errorf("%w: %s %q is not a Kubernetes name", ErrBadAnnotation, what, clip.String(v))
		}
	}
	return Identity{Runtime: NRI, PodUID: canonical(p.UID), SandboxID: p.ID, Namespace: p.Namespace, PodName: p.Name}, nil
}
