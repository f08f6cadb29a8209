package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// PodOptions describe one `podman pod create`.
type PodOptions struct {
	// Name is the pod's name; required (members name their pod by it).
	Name string
	// Runtime is the OCI runtime of the pod's infra container, "runc" when empty. (Members
	// choose theirs in PodmanRunOptions; podman starts the infra with the first of them.)
	Runtime string
	// NoInfra makes a pod without an infra container (--infra=false).
	NoInfra bool
	// Flags are more `podman pod create` flags, for instance "--share-parent=false".
	Flags []string
}

// PodmanPod is a pod made by CreatePod.
type PodmanPod struct {
	Name string
	ID   string
	// InfraID is the ID of the pod's infra container, "" for a pod without one. Podman
	// creates it with the pod and starts it with the pod's first member.
	InfraID string
}

// CreatePod runs `podman pod create`. A pod with an infra container gets no network of its
// own (--network none: netavark is never called); its members join the infra's. The pod,
// its infra container and its members are removed when the test ends.
func (p *PodmanRunner) CreatePod(o PodOptions) (PodmanPod, error) {
	if o.Name == "" {
		return PodmanPod{}, fmt.Errorf("podman pod create: Name is required")
	}
	if !o.NoInfra {
		// podman builds the infra container's image from catatonit, unless told another.
		lookBin(p.t, "catatonit")
	}
	runtime := o.Runtime
	if runtime == "" {
		runtime = "runc"
	}
	args := []string{"--runtime", runtime, "pod", "create", "--name", o.Name}
	if o.NoInfra {
		// podman refuses a network mode for a pod without infra; its members choose theirs.
		args = append(args, "--infra=false")
	} else {
		args = append(args, "--network", "none")
	}
	args = append(args, o.Flags...)
	out, err := p.Command(args...)
	if err != nil {
		return PodmanPod{}, err
	}
	pod := PodmanPod{Name: o.Name, ID: strings.TrimSpace(string(out))}
	out, cgErr := p.Command("pod", "inspect", "--format", "{{.CgroupPath}}", pod.ID)
	cgroup := strings.TrimSpace(string(out))
	p.t.Cleanup(func() {
		if _, err := p.Command("pod", "rm", "--force", "--ignore", "--time", "0", pod.ID); err != nil {
			p.t.Errorf("e2e: cleanup: %v", err)
		}
		// podman 4.3 with cgroupfs on a hybrid host leaves the removed pod's empty cgroup in
		// the unified and name=systemd hierarchies: one more for every pod of every run.
		if err := removeEmptyCgroup(cgroup); err != nil {
			p.t.Errorf("e2e: cleanup: pod %s: %v", pod.Name, err)
		}
	})
	if cgErr != nil {
		return pod, cgErr
	}
	p.mu.Lock()
	p.noInfra[pod.Name], p.noInfra[pod.ID] = o.NoInfra, o.NoInfra
	p.mu.Unlock()
	if !o.NoInfra {
		out, err = p.Command("pod", "inspect", "--format", "{{.InfraContainerID}}", pod.ID)
		if err != nil {
			return pod, err
		}
		pod.InfraID = strings.TrimSpace(string(out))
		if pod.InfraID == "" {
			return pod, fmt.Errorf("podman pod inspect %s: no infra container", pod.ID)
		}
	}
	return pod, nil
}

// RemovePod removes a pod and every container in it, killing them at once. Podman removes
// the members first and the infra container last.
func (p *PodmanRunner) RemovePod(nameOrID string) error {
	_, err := p.Command("pod", "rm", "--force", "--time", "0", nameOrID)
	return err
}

// podWithoutInfra reports whether pod, made by CreatePod, has no infra container.
func (p *PodmanRunner) podWithoutInfra(pod string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.noInfra[pod]
}

// removeEmptyCgroup removes the empty cgroup at path (as /proc/<pid>/cgroup names it) in every
// hierarchy that has it; not its descendants, and never a hierarchy's root.
func removeEmptyCgroup(path string) error {
	dirs, err := cgroupDirs(path)
	if err != nil {
		return err
	}
	var errs []error
	for _, dir := range dirs {
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
