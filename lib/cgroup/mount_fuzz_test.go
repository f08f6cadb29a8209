package cgroup

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
)

// A cgroup v2 path comes from /proc/<pid>/cgroup, the mounts from mountinfo: both are read
// from processes resctrl-mon does not control (a sidecar reads a container's). Whatever they
// say, a directory dirIn names is inside the mount it chose (never "..", never above its
// mountpoint), that mount's root holds the cgroup, and no cgroup2 mount whose root holds it
// more closely was passed over.
func FuzzDirIn(f *testing.F) {
	const line = "35 24 0:30 %s %s rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
	for _, s := range []struct{ info, cg string }{
		{fmt.Sprintf(line, "/", "/sys/fs/cgroup"), "/kubepods.slice/pod1/c1"},
		{fmt.Sprintf(line, "/", "/sys/fs/cgroup/unified") + fmt.Sprintf(line, "/kubepods", "/run/k"), "/kubepods/pod1"},
		{fmt.Sprintf(line, "/kubepods/pod1", "/sys/fs/cgroup"), "/kubepods/pod1/../pod2"},
		{fmt.Sprintf(line, "/a", "/m"), "/../x"},
		{fmt.Sprintf(line, "/a", "/m"), "/a"},
		{fmt.Sprintf(line, "/a\\040b", "/m\\040n"), "/a b/c"},
		{"garbage\n", "/x"},
	} {
		f.Add(s.info, s.cg)
	}
	f.Fuzz(func(t *testing.T, info, cg string) {
		ms, err := mountinfo.GetMountsFromReader(strings.NewReader(info), mountinfo.FSTypeFilter("cgroup2"))
		if err != nil {
			return
		}
		dir, ok := dirIn(ms, cg)
		if !ok {
			if dir != "" {
				t.Errorf("dirIn(%q) = %q, not found", cg, dir)
			}
			for _, m := range ms {
				if _, in := under(m.Root, cg); in {
					t.Errorf("mount root %q holds %q, yet dirIn found none", m.Root, cg)
				}
			}
			return
		}
		var chose *mountinfo.Info
		for _, m := range ms {
			rel, in := under(m.Root, cg)
			if !in {
				continue
			}
			if strings.Contains("/"+rel+"/", "/../") {
				t.Errorf("under(%q, %q) = %q: leaves the root", m.Root, cg, rel)
			}
			if chose == nil || len(m.Root) > len(chose.Root) {
				chose = m
			}
		}
		if chose == nil {
			t.Fatalf("dirIn(%q) = %q, but no mount's root holds it", cg, dir)
		}
		mp := filepath.Clean(chose.Mountpoint)
		if r, err := filepath.Rel(mp, dir); err != nil || r == ".." || strings.HasPrefix(r, "../") {
			t.Errorf("dirIn(%q) = %q, outside the mount %q it chose (root %q)", cg, dir, mp, chose.Root)
		}
		rel, _ := under(chose.Root, cg)
		if want := filepath.Join(chose.Mountpoint, rel); dir != want && len(dirRootsOf(ms, chose.Root)) == 1 {
			t.Errorf("dirIn(%q) = %q, want %q (mount root %q at %q)", cg, dir, want, chose.Root, chose.Mountpoint)
		}
	})
}

// dirRootsOf lists the mounts with this root: several of them make dirIn's choice among
// them the first, which the test does not second-guess.
func dirRootsOf(ms []*mountinfo.Info, root string) []*mountinfo.Info {
	var out []*mountinfo.Info
	for _, m := range ms {
		if m.Root == root {
			out = append(out, m)
		}
	}
	return out
}
