package nriplugin

import (
	"errors"
	"slices"
	"testing"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
)

// class reads the RDT fields NRI sends (after other plugins adjusted them): whatever they
// hold, the class is the runtime's closID, else kubelet's rdt class, else (RDT settings
// without either) the container's id, else none; "/" is the root class, none.
func FuzzClass(f *testing.F) {
	f.Add("c1", "gold", "", true)
	f.Add("c1", "", "silver", false)
	f.Add("c1", "", "", true)
	f.Add("c1", "/", "", true)
	f.Add("c1", "", "/", false)
	f.Add("c1", "../x", "", true)
	f.Fuzz(func(t *testing.T, id, closID, rdtClass string, withRdt bool) {
		l := &api.LinuxContainer{}
		if withRdt {
			l.Rdt = &api.LinuxRdt{ClosId: api.String(closID)}
		} else if closID != "" {
			// Without RDT settings only kubelet's class is there to send.
			rdtClass = closID
		}
		if rdtClass != "" {
			l.Resources = &api.LinuxResources{RdtClass: api.String(rdtClass)}
		}
		got := class(&api.Container{Id: id, Linux: l})
		want := closID
		if !withRdt || want == "" {
			want = rdtClass
		}
		switch {
		case want == "/":
			want = ""
		case want == "" && withRdt:
			want = id
		}
		if got != want {
			t.Errorf("class(id %q, closID %q, rdt class %q, settings %v) = %q, want %q", id, closID, rdtClass, withRdt, got, want)
		}
	})
}

// initPid: the pid the runtime sent wins; without one, a created container's init is the one
// process of its cgroup (none when it holds more: the container has started), a running
// one's the lowest; whatever the cgroup lists, the answer is one of its processes or 0.
func FuzzInitPid(f *testing.F) {
	f.Add(uint32(0), []byte{3, 1, 2}, true, false)
	f.Add(uint32(0), []byte{7}, true, false)
	f.Add(uint32(0), []byte{5, 4}, false, false)
	f.Add(uint32(42), []byte{1}, true, false)
	f.Add(uint32(0), []byte{}, false, true)
	f.Add(uint32(1<<31), []byte{}, false, false)
	f.Fuzz(func(t *testing.T, sent uint32, procs []byte, created, fails bool) {
		var listed []int
		for _, p := range procs {
			listed = append(listed, int(p)+1)
		}
		slices.Sort(listed) // inCgroup lists lowest first
		asked := false
		inCgroup := func(string) ([]int, error) {
			asked = true
			if fails {
				return nil, errors.New("no /proc")
			}
			return listed, nil
		}
		got := initPid(&api.Container{Pid: sent, Linux: &api.LinuxContainer{CgroupsPath: "/kubepods/c1"}}, created, inCgroup)
		switch {
		case sent != 0:
			if got != int(sent) || asked {
				t.Errorf("sent %d: got %d (cgroup read: %v)", sent, got, asked)
			}
		case fails || len(listed) == 0 || (created && len(listed) != 1):
			if got != 0 {
				t.Errorf("no init to take (listed %v, created %v, fails %v): got %d", listed, created, fails, got)
			}
		case got != listed[0]:
			t.Errorf("listed %v, created %v: got %d, want the lowest", listed, created, got)
		}
		if got < 0 {
			t.Errorf("pid %d", got)
		}
	})
}

// liveContainers is NRI's list of what runs, as reconcile takes it: whatever the runtime
// sends, a live container is one of the sent ones, of a sent pod the selector takes, not
// stopped, with the pid sent and its pod's identity as the runtime set it (never from its
// annotations); a container is live or refused (its pod's identity does not add up), never
// both, and each at most once.
func FuzzLiveContainers(f *testing.F) {
	f.Add(uidA, sbA, "default", "web", "c1", sbA, uint8(10), uint8(api.ContainerState_CONTAINER_RUNNING), "app!=db")
	f.Add("not-a-uid", sbA, "default", "web", "c1", sbA, uint8(10), uint8(api.ContainerState_CONTAINER_RUNNING), "")
	f.Add(uidA, "short", "", "", "c1", "short", uint8(10), uint8(api.ContainerState_CONTAINER_STOPPED), "")
	f.Add(uidA, sbA, "default", "db", "c1", "other", uint8(1), uint8(api.ContainerState_CONTAINER_CREATED), "app=db")
	f.Fuzz(func(t *testing.T, uid, sandbox, ns, name, id, podOf string, pid, state uint8, selector string) {
		sel, err := config.ParseSelector(selector)
		if err != nil {
			return
		}
		pods := []*api.PodSandbox{
			{Id: sandbox, Uid: uid, Namespace: ns, Name: name, Labels: map[string]string{"app": name},
				Annotations: map[string]string{"io.kubernetes.pod.uid": "ffffffff-ffff-4fff-8fff-ffffffffffff"}},
		}
		ctrs := []*api.Container{
			{Id: id, PodSandboxId: podOf, Pid: uint32(pid) + 1, State: api.ContainerState(state % 5)},
			{Id: id + "-2", PodSandboxId: sandbox, Pid: uint32(pid) + 2, State: api.ContainerState_CONTAINER_RUNNING},
		}
		live, refused := liveContainers(pods, ctrs, sel, anyInit)
		seen := map[string]bool{}
		for _, c := range live {
			var sent *api.Container
			for _, s := range ctrs {
				if s.Id == c.ID && !seen[c.ID] {
					sent = s
				}
			}
			if sent == nil {
				t.Fatalf("live %q: not sent, or twice", c.ID)
			}
			seen[c.ID] = true
			if sent.PodSandboxId != sandbox || sent.State == api.ContainerState_CONTAINER_STOPPED || !sel.Matches(pods[0].Labels) {
				t.Errorf("live %q: pod %q, state %v, selected %v", c.ID, sent.PodSandboxId, sent.State, sel.Matches(pods[0].Labels))
			}
			if c.Pid != int(sent.Pid) || c.Runtime != "nri" {
				t.Errorf("live %q: pid %d runtime %q, sent %d", c.ID, c.Pid, c.Runtime, sent.Pid)
			}
			want, err := identity.FromPodSandbox(identity.PodSandbox{ID: sandbox, UID: uid, Namespace: ns, Name: name})
			if err != nil {
				t.Fatalf("live %q of a pod whose identity is refused: %v", c.ID, err)
			}
			want.ContainerName = sent.GetName()
			if c.Pod == nil || *c.Pod != want {
				t.Errorf("live %q: pod %+v, want %+v", c.ID, c.Pod, want)
			}
			if refused[c.ID] != nil {
				t.Errorf("%q both live and refused", c.ID)
			}
		}
		for rid, err := range refused {
			if err == nil || !slices.ContainsFunc(ctrs, func(c *api.Container) bool { return c.Id == rid }) {
				t.Errorf("refused %q: %v", rid, err)
			}
		}
	})
}
