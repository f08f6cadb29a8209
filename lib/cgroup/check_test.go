package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Check: a pid is taken only in the cgroup the spec names, and its v2 path comes back.
func TestCheck(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	for pid, text := range map[string]string{
		"10": "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-c1.scope\n",
		"11": "0::/kubepods.slice/kubepods-pod2.slice/cri-containerd-c2.scope\n",
		"12": "8:pids:/kubepods/pod1/c1\n",
	} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "cgroup"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := Host{Proc: proc}
	for _, tc := range []struct {
		name   string
		pid    int
		path   string
		want   string
		refuse bool
	}{
		{"its own (systemd driver)", 10, "kubepods-pod1.slice:cri-containerd:c1", "/kubepods.slice/kubepods-pod1.slice/cri-containerd-c1.scope", false},
		{"another pod's process", 11, "kubepods-pod1.slice:cri-containerd:c1", "", true},
		{"v1 only: no v2 path", 12, "/kubepods/pod1/c1", "", false},
		{"gone", 13, "/kubepods/pod1/c1", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := h.Check(tc.pid, tc.path)
			if errors.Is(err, ErrElsewhere) != tc.refuse || (!tc.refuse && tc.pid != 13 && err != nil) || (tc.pid == 13 && err == nil) {
				t.Fatalf("Check(%d, %q) = %q, %v", tc.pid, tc.path, got, err)
			}
			if got != tc.want {
				t.Errorf("Check(%d, %q) = %q, want %q", tc.pid, tc.path, got, tc.want)
			}
		})
	}
}
