// Package identity tells which pod a container belongs to, from the annotations its runtime
// put on its OCI spec. Pod annotations are user-controlled in Kubernetes, so identity comes
// only from the keys each runtime sets itself, every key the runtime gives twice is
// cross-checked, and anything that does not add up is refused rather than guessed.
//
// What each runtime sends is captured from the real runtime (test/e2e/capturehook; containerd,
// which runs no hooks, by its bundle) and kept in testdata, one file per case; TestFixtures
// reads them, and test/e2e/identity's TestIdentityFixtures (runc, crun, podman), TestCaptureCRIO and
// TestCaptureContainerd capture them again and fail when a runtime sends something else
// (with -update-fixtures they rewrite them).
//
// A podman pod's infra container is the one case the annotations cannot tell: podman gives
// it no annotation of its pod (the members name it as their sandbox). FromSpec tells it by
// the one thing podman sets only on it: a place under the pod's cgroup without a sandbox id.
package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Annotation keys, by runtime.
const (
	// CRI-O (kubelet labels are copied to annotations).
	CRIOPodUID        = "io.kubernetes.pod.uid"
	CRIOPodNamespace  = "io.kubernetes.pod.namespace"
	CRIOPodName       = "io.kubernetes.pod.name"
	CRIOContainerName = "io.kubernetes.container.name"
	CRIOSandboxID     = "io.kubernetes.cri-o.SandboxID"
	CRIOContainerType = "io.kubernetes.cri-o.ContainerType"
	CRIOLabels        = "io.kubernetes.cri-o.Labels"
	// CRIOContainerID is set by CRI-O on every container it makes, never by podman.
	CRIOContainerID = "io.kubernetes.cri-o.ContainerID"
	// CRIOSandboxName is CRI-O's own name for the sandbox, made from the pod metadata kubelet
	// sends over CRI: k8s_<name>_<namespace>_<uid>_<attempt>. It carries the pod UID CRI-O
	// received even when the container has none of kubelet's labels.
	CRIOSandboxName = "io.kubernetes.cri-o.SandboxName"
	// containerd's CRI plugin.
	ContainerdPodUID        = "io.kubernetes.cri.sandbox-uid"
	ContainerdSandboxID     = "io.kubernetes.cri.sandbox-id"
	ContainerdContainerType = "io.kubernetes.cri.container-type"
	ContainerdPodNamespace  = "io.kubernetes.cri.sandbox-namespace"
	ContainerdPodName       = "io.kubernetes.cri.sandbox-name"
	ContainerdContainerName = "io.kubernetes.cri.container-name"
)

// Keys are the annotations the identity of a container is read from.
func Keys() []string {
	return []string{
		CRIOPodUID, CRIOPodNamespace, CRIOPodName, CRIOContainerName, CRIOSandboxID, CRIOContainerType,
		CRIOLabels, CRIOContainerID,
		ContainerdPodUID, ContainerdSandboxID, ContainerdContainerType, ContainerdPodNamespace,
		ContainerdPodName, ContainerdContainerName,
	}
}

// SandboxContainerName is the container name kubelet gives a pod's sandbox.
const SandboxContainerName = "POD"

// Runtime names who set the annotations.
type Runtime string

const (
	CRIO       Runtime = "cri-o"
	Containerd Runtime = "containerd"
	Podman     Runtime = "podman" // a podman pod: a sandbox id (the infra's, or the pod's), no pod UID
	NRI        Runtime = "nri"    // told by the runtime over NRI (containerd, CRI-O): its PodSandbox
	Plain      Runtime = ""       // no pod at all: runc, crun, podman run
)

// Identity is who a container is.
type Identity struct {
	Runtime       Runtime
	PodUID        string // canonical lowercase dashed form; empty without a Kubernetes pod
	SandboxID     string // the pod's sandbox (infra) container; empty without a pod
	Namespace     string
	PodName       string
	ContainerName string
	// Sandbox is true for the pod's sandbox (pause/infra) container itself; its SandboxID is
	// then its own id.
	Sandbox bool
}

// HasPod reports whether the container belongs to a pod of some kind.
func (i Identity) HasPod() bool { return i.PodUID != "" || i.SandboxID != "" }

var (
	// ErrMismatch: the runtime's own records disagree (a spoofed or corrupt annotation).
	ErrMismatch = errors.New("pod identity does not add up")
	// ErrBadAnnotation: an annotation the identity depends on is malformed.
	ErrBadAnnotation = errors.New("bad annotation")
)

// maxValue bounds an annotation value we read: ids, names and CRI-O's labels record are
// small; anything larger is not what a runtime wrote.
const maxValue = 16 << 10

// FromAnnotations derives the identity of container id from its spec's annotations.
func FromAnnotations(id string, a map[string]string) (Identity, error) {
	get := func(key string) (string, error) {
		v := a[key]
		if len(v) > maxValue {
			return "", fmt.Errorf("%w %s: %d bytes", ErrBadAnnotation, key, len(v))
		}
		if strings.ContainsAny(v, "\x00\n") {
			return "", fmt.Errorf("%w %s: contains a NUL or newline", ErrBadAnnotation, key)
		}
		return v, nil
	}
	var errs []error
	val := func(key string) string {
		v, err := get(key)
		errs = append(errs, err)
		return v
	}
	crioUID, cdUID := val(CRIOPodUID), val(ContainerdPodUID)
	crioSB, cdSB := val(CRIOSandboxID), val(ContainerdSandboxID)
	crioType, cdType := val(CRIOContainerType), val(ContainerdContainerType)
	labels, crioID, sbName := val(CRIOLabels), val(CRIOContainerID), val(CRIOSandboxName)
	if err := errors.Join(errs...); err != nil {
		return Identity{}, err
	}

	var idn Identity
	switch {
	case cdUID != "" || cdSB != "" || cdType != "":
		if crioType != "" || crioSB != "" {
			return Identity{}, fmt.Errorf("%w: both containerd and CRI-O sandbox annotations are set", ErrMismatch)
		}
		idn = Identity{Runtime: Containerd, SandboxID: cdSB, Namespace: a[ContainerdPodNamespace],
			PodName: a[ContainerdPodName], ContainerName: a[ContainerdContainerName]}
		if err := setType(&idn, id, cdType, ContainerdContainerType); err != nil {
			return Identity{}, err
		}
		if err := setUID(&idn, ContainerdPodUID, cdUID); err != nil {
			return Identity{}, err
		}
		if crioUID != "" && canonical(crioUID) != idn.PodUID {
			return Identity{}, fmt.Errorf("%w: %s %q differs from %s %q", ErrMismatch, CRIOPodUID, crioUID, ContainerdPodUID, cdUID)
		}
	case crioUID == "" && crioID == "" && crioSB != "" && crioType == "container":
		// A member of a podman 4.3 pod: CRI-O's sandbox and type keys, which podman sets for
		// Kata, and no pod UID (testdata/podman-pod-member.json). The sandbox id is the infra
		// container's, or the pod's own id in a pod without one. Not a CRI-O container without
		// kubelet's labels: CRI-O sets its ContainerID key on every container, and a pod's
		// annotations can add keys but not remove CRI-O's. (No podman key is required:
		// podman's poststop state lacks io.container.manager.)
		idn = Identity{Runtime: Podman, SandboxID: crioSB}
		if err := setType(&idn, id, crioType, CRIOContainerType); err != nil {
			return Identity{}, err
		}
	case crioType != "" || (crioSB != "" && crioUID != ""):
		idn = Identity{Runtime: CRIO, SandboxID: crioSB, Namespace: a[CRIOPodNamespace],
			PodName: a[CRIOPodName], ContainerName: a[CRIOContainerName]}
		if err := setType(&idn, id, crioType, CRIOContainerType); err != nil {
			return Identity{}, err
		}
		if err := setCRIOPod(&idn, crioUID, sbName); err != nil {
			return Identity{}, err
		}
		if err := checkLabels(labels, idn.PodUID); err != nil {
			return Identity{}, err
		}
	case crioSB != "":
		// podman ≥ 4.4 dropped the type key: its pods carry CRI-O's sandbox key alone.
		idn = Identity{Runtime: Podman, SandboxID: crioSB, Sandbox: crioSB == id}
	case crioUID != "":
		// A pod UID with no sandbox: not something a runtime writes.
		return Identity{}, fmt.Errorf("%w: %s is set without a sandbox id", ErrMismatch, CRIOPodUID)
	default:
		return Identity{Runtime: Plain}, nil
	}
	if idn.SandboxID == "" {
		return Identity{}, fmt.Errorf("%w: %s pod without a sandbox id", ErrMismatch, idn.Runtime)
	}
	if !IsSandboxID(idn.SandboxID) {
		return Identity{}, fmt.Errorf("%w: sandbox id %q is not 64 lowercase hex digits", ErrBadAnnotation, clip.String(idn.SandboxID))
	}
	for what, v := range map[string]string{"namespace": idn.Namespace, "pod name": idn.PodName, "container name": idn.ContainerName} {
		// kubelet names a pod's sandbox container "POD" (its io.kubernetes.container.name
		// label), which no container of the pod's spec can be called.
		if what == "container name" && idn.Sandbox && v == SandboxContainerName {
			continue
		}
		if v != "" && !isName(v) {
			return Identity{}, fmt.Errorf("%w: %s %q is not a Kubernetes name", ErrBadAnnotation, what, clip.String(v))
		}
	}
	return idn, nil
}

// setType records whether the container is the pod's sandbox. A sandbox is its own
// sandbox: a "sandbox" whose sandbox id is another container's is a lie.
func setType(idn *Identity, id, typ, key string) error {
	switch typ {
	case "sandbox":
		if idn.SandboxID != id {
			return fmt.Errorf("%w: %s=sandbox but the sandbox id is %q, not the container's own", ErrMismatch, key, clip.String(idn.SandboxID))
		}
		idn.Sandbox = true
	case "container", "":
		if idn.SandboxID == id && idn.SandboxID != "" {
			return fmt.Errorf("%w: a container that is its own sandbox is not marked %s=sandbox", ErrMismatch, key)
		}
	default:
		return fmt.Errorf("%w %s: %q is neither sandbox nor container", ErrBadAnnotation, key, clip.String(typ))
	}
	return nil
}

func setUID(idn *Identity, key, uid string) error {
	if uid == "" {
		return fmt.Errorf("%w: %s pod without %s", ErrMismatch, idn.Runtime, key)
	}
	if !resctrlfs.ValidPodUID(uid) {
		return fmt.Errorf("%w %s: %q is not a pod UID", ErrBadAnnotation, key, clip.String(uid))
	}
	idn.PodUID = canonical(uid)
	return nil
}

// setCRIOPod takes a CRI-O container's pod from kubelet's labels (io.kubernetes.pod.*) and
// from CRI-O's own sandbox name, which holds the metadata CRI-O received: either alone
// will do (without kubelet the labels are missing), and when both are there they must agree.
func setCRIOPod(idn *Identity, uid, sandboxName string) error {
	if sandboxName == "" {
		return setUID(idn, CRIOPodUID, uid)
	}
	name, ns, nameUID, err := ParseCRIOSandboxName(sandboxName)
	if err != nil {
		return err
	}
	if uid == "" {
		uid = nameUID
	} else if canonical(uid) != canonical(nameUID) {
		return fmt.Errorf("%w: %s %q differs from the pod UID %q in %s", ErrMismatch, CRIOPodUID, clip.String(uid), nameUID, CRIOSandboxName)
	}
	for what, pair := range map[string][2]*string{"namespace": {&idn.Namespace, &ns}, "name": {&idn.PodName, &name}} {
		if *pair[0] == "" {
			*pair[0] = *pair[1]
		} else if *pair[0] != *pair[1] {
			return fmt.Errorf("%w: the pod %s %q differs from %q in %s", ErrMismatch, what, clip.String(*pair[0]), clip.String(*pair[1]), CRIOSandboxName)
		}
	}
	return setUID(idn, CRIOSandboxName, uid)
}

// ParseCRIOSandboxName splits CRI-O's sandbox name, k8s_<name>_<namespace>_<uid>_<attempt>.
// Kubernetes names and namespaces hold no '_', so the fields are unambiguous.
func ParseCRIOSandboxName(s string) (name, namespace, uid string, err error) {
	f := strings.Split(s, "_")
	if len(f) != 5 || f[0] != "k8s" {
		return "", "", "", fmt.Errorf("%w %s: %q is not k8s_<name>_<namespace>_<uid>_<attempt>", ErrBadAnnotation, CRIOSandboxName, clip.String(s))
	}
	if _, aerr := strconv.ParseUint(f[4], 10, 32); aerr != nil {
		return "", "", "", fmt.Errorf("%w %s: attempt %q is not a number", ErrBadAnnotation, CRIOSandboxName, clip.String(f[4]))
	}
	if !isName(f[1]) || !isName(f[2]) {
		return "", "", "", fmt.Errorf("%w %s: %q or %q is not a Kubernetes name", ErrBadAnnotation, CRIOSandboxName, clip.String(f[1]), clip.String(f[2]))
	}
	if !resctrlfs.ValidPodUID(f[3]) {
		return "", "", "", fmt.Errorf("%w %s: %q is not a pod UID", ErrBadAnnotation, CRIOSandboxName, clip.String(f[3]))
	}
	return f[1], f[2], f[3], nil
}

// checkLabels cross-checks the pod UID against CRI-O's record of the sandbox's labels,
// which kubelet set and which CRI-O keeps next to the annotation.
func checkLabels(labels, uid string) error {
	if labels == "" {
		return nil
	}
	var l map[string]string
	if err := json.Unmarshal([]byte(labels), &l); err != nil {
		return fmt.Errorf("%w %s: %w", ErrBadAnnotation, CRIOLabels, err)
	}
	if v, ok := l[CRIOPodUID]; ok && canonical(v) != uid {
		return fmt.Errorf("%w: %s %q differs from the pod UID %q in %s", ErrMismatch, CRIOPodUID, uid, clip.String(v), CRIOLabels)
	}
	return nil
}

// canonical is the lowercase dashed form that consumers select groups by.
func canonical(uid string) string { return resctrlfs.CanonicalPodUID(uid) }

// IsSandboxID reports whether s is a sandbox id as runtimes make them: 64 lowercase hex
// digits. (Loops, not regexps: a hook pays for every package init on every call.)
func IsSandboxID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isName reports whether s is a Kubernetes name (a DNS subdomain): lowercase alphanumerics,
// '-' and '.', starting and ending alphanumeric, at most 253 characters.
func isName(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	for i := range len(s) {
		if c := s[i]; !alnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return alnum(s[0]) && alnum(s[len(s)-1])
}
