package lifecycle

import (
	"path"
	"strings"
	"testing"
)

// podCgroupV2 takes the pod's cgroup as the runtime named it (NRI's CgroupParent: a field
// the runtime fills from what kubelet sent) and the container's cgroup v2 path from
// /proc/<pid>/cgroup. Whatever they say, what is recorded as the pod's cgroup (the pressure
// readers open it) is "" or the container's own parent, never the root or a path above it,
// and only when the named cgroup is that parent: a cgroupfs path ending it, at a component
// boundary, or a systemd slice named as it.
func FuzzPodCgroupV2(f *testing.F) {
	for _, s := range [][2]string{
		{"/kubepods/burstable/pod1", "/kubepods/burstable/pod1/c1"},
		{"kubepods-burstable-pod1.slice", "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-c1.scope"},
		{"/pod1", "/kubepods/xpod1/c1"},
		{"/", "/c1"},
		{"", "/a/b"},
		{"b", "/a/b/c"},
		{"/a/b", "/a/b"},
		{"..", "/a/../c"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, named, container string) {
		got := podCgroupV2(named, container)
		if got == "" {
			return
		}
		if got == "/" || got == "." {
			t.Fatalf("podCgroupV2(%q, %q) = %q", named, container, got)
		}
		if got != path.Dir(container) {
			t.Errorf("podCgroupV2(%q, %q) = %q, not the container's parent", named, container, got)
		}
		if clean := path.Clean(container); clean == container && !strings.HasPrefix(container, got+"/") {
			t.Errorf("podCgroupV2(%q, %q) = %q, not above the container", named, container, got)
		}
		switch {
		case strings.HasPrefix(named, "/"):
			if !strings.HasSuffix(got, named) {
				t.Errorf("podCgroupV2(%q, %q) = %q, which the named path does not end", named, container, got)
			}
		case path.Base(got) != named:
			t.Errorf("podCgroupV2(%q, %q) = %q, not the slice named", named, container, got)
		}
	})
}
