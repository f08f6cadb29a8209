package nriplugin

import (
	"maps"
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
)

const (
	uidA = "0f8b2c1e-1111-2222-3333-444455556666"
	uidB = "11111111-2222-3333-4444-555555555555"
)

var (
	sbA = strings.Repeat("a", 64)
	sbB = strings.Repeat("b", 64)
)

func TestClass(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		ctr  *api.Container
		want string
	}{
		"none":      {&api.Container{}, ""},
		"no linux":  {&api.Container{Linux: &api.LinuxContainer{}}, ""},
		"rdt class": {&api.Container{Linux: &api.LinuxContainer{Resources: &api.LinuxResources{RdtClass: api.String("gold")}}}, "gold"},
		"closID wins over the class": {&api.Container{Linux: &api.LinuxContainer{Resources: &api.LinuxResources{RdtClass: api.String("gold")},
			Rdt: &api.LinuxRdt{ClosId: api.String("silver")}}}, "silver"},
		"rdt without closID": {&api.Container{Linux: &api.LinuxContainer{Resources: &api.LinuxResources{RdtClass: api.String("gold")},
			Rdt: &api.LinuxRdt{}}}, "gold"},
		// CRI-O's GetRdt sends the spec's linux.intelRdt, an empty closID included: runc and
		// crun then name the class by the container's id.
		"rdt, empty closID, only enableMonitoring": {&api.Container{Id: "c1", Linux: &api.LinuxContainer{
			Rdt: &api.LinuxRdt{ClosId: api.String(""), EnableMonitoring: api.Bool(true)}}}, "c1"},
		"rdt, only schemata": {&api.Container{Id: "c1", Linux: &api.LinuxContainer{
			Rdt: &api.LinuxRdt{Schemata: api.RepeatedString([]string{"L3:0=ff"})}}}, "c1"},
		"rdt, root by name": {&api.Container{Id: "c1", Linux: &api.LinuxContainer{
			Rdt: &api.LinuxRdt{ClosId: api.String("/"), EnableMonitoring: api.Bool(true)}}}, ""},
	} {
		if got := class(tc.ctr); got != tc.want {
			t.Errorf("%s: class %q, want %q", name, got, tc.want)
		}
	}
}

func TestAnnotations(t *testing.T) {
	t.Parallel()
	pod := &api.PodSandbox{Annotations: map[string]string{"a": "pod", "b": "pod"}}
	ctr := &api.Container{Annotations: map[string]string{"b": "ctr", "c": "ctr"}}
	if got, want := annotations(pod, ctr), map[string]string{"a": "pod", "b": "ctr", "c": "ctr"}; !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if pod.Annotations["b"] != "pod" {
		t.Errorf("the pod's annotations were changed")
	}
	if got := annotations(&api.PodSandbox{}, &api.Container{}); got == nil || len(got) != 0 {
		t.Errorf("empty: %v", got)
	}
}

func TestLiveContainers(t *testing.T) {
	t.Parallel()
	pods := []*api.PodSandbox{
		{Id: sbA, Uid: strings.ToUpper(strings.ReplaceAll(uidA, "-", "")), Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}},
		{Id: sbB, Uid: uidB, Namespace: "default", Name: "db", Labels: map[string]string{"app": "db"}},
		{Id: "short", Uid: uidB, Name: "bad"},
	}
	ctrs := []*api.Container{
		{Id: "c1", PodSandboxId: sbA, Pid: 10, State: api.ContainerState_CONTAINER_RUNNING, Annotations: map[string]string{"x": "1"}},
		{Id: "c2", PodSandboxId: sbA, Pid: 11, State: api.ContainerState_CONTAINER_CREATED,
			Linux: &api.LinuxContainer{CgroupsPath: "/kubepods/c2", Resources: &api.LinuxResources{RdtClass: api.String("gold")}}},
		{Id: "c3", PodSandboxId: sbA, Pid: 0, State: api.ContainerState_CONTAINER_CREATED},  // no init yet
		{Id: "c4", PodSandboxId: sbA, Pid: 12, State: api.ContainerState_CONTAINER_STOPPED}, // gone
		{Id: "c5", PodSandboxId: sbB, Pid: 13, State: api.ContainerState_CONTAINER_RUNNING},
		{Id: "c6", PodSandboxId: "unknown", Pid: 14, State: api.ContainerState_CONTAINER_RUNNING},
		{Id: "c7", PodSandboxId: "short", Pid: 15, State: api.ContainerState_CONTAINER_RUNNING},
	}
	sel, err := config.ParseSelector("app!=db")
	if err != nil {
		t.Fatal(err)
	}
	live, refused := liveContainers(pods, ctrs, sel, anyInit)
	var ids []string
	for _, c := range live {
		ids = append(ids, c.ID)
		want := identity.Identity{Runtime: identity.NRI, PodUID: uidA, SandboxID: sbA, Namespace: "default", PodName: "web"}
		if c.Pod == nil || *c.Pod != want {
			t.Errorf("%s: pod %+v, want %+v", c.ID, c.Pod, want)
		}
	}
	if strings.Join(ids, ",") != "c1,c2" {
		t.Errorf("live %v, want c1,c2 (c3 has no init, c4 stopped, c5 not selected, c6 no pod, c7 refused)", ids)
	}
	if live[1].ClosID != "gold" || live[1].CgroupsPath != "/kubepods/c2" || live[1].Pid != 11 || live[0].Annotations["x"] != "1" {
		t.Errorf("converted %+v", live)
	}
	if len(refused) != 1 || refused["c7"] == nil {
		t.Errorf("refused %v, want c7", refused)
	}
}

// anyInit takes every pid as its container's: the pids of these tests are made up.
func anyInit(int, *api.Container) (string, error) { return "", nil }
