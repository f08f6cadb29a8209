package lifecycle

import "testing"

// What is recorded as a pod's cgroup: the container's parent when the runtime named it, and
// nothing for a container path that names no cgroup of this namespace.
func TestPodCgroupV2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ named, container, want string }{
		{"/kubepods/burstable/pod1", "/kubepods/burstable/pod1/c1", "/kubepods/burstable/pod1"},
		{"/pod1", "/kubepods/burstable/pod1/c1", "/kubepods/burstable/pod1"}, // the named path ends the parent
		{"kubepods-burstable-pod1.slice", "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-c1.scope",
			"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice"},
		{"/pod1", "/kubepods/xpod1/c1", ""},         // not at a component boundary
		{"/kubepods/pod2", "/kubepods/pod1/c1", ""}, // another pod
		{"", "/kubepods/pod1/c1", ""},
		{"/kubepods/pod1", "", ""},
		{"/", "/c1", ""}, // never the root
		{"/a/b", "/a/b", ""},
		// Outside this cgroup namespace: path.Dir would clean it to "/kubepods/pod1", another
		// cgroup here.
		{"/kubepods/pod1", "/../kubepods/pod1/c1", ""},
		{"pod1.slice", "/../kubepods.slice/pod1.slice/c1.scope", ""},
		{"..", "/a/../c", ""},
		{"/kubepods/pod1", "/kubepods/pod1/c1/", ""},
		{"/kubepods/pod1", "/kubepods//pod1/c1", ""},
	} {
		if got := podCgroupV2(tc.named, tc.container); got != tc.want {
			t.Errorf("podCgroupV2(%q, %q) = %q, want %q", tc.named, tc.container, got, tc.want)
		}
	}
}
