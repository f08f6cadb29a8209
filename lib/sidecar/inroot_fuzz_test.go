package sidecar

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// readInRoot reads a path (the flag path) inside another process's root, a tree that
// process's owner controls: its symlinks, FIFOs and file sizes are outside input. Whatever
// the path and wherever a symlink in the tree points, what comes back is a regular file's
// content from inside the root, at most max bytes, and the call returns (a FIFO is refused,
// not waited on).
func FuzzReadInRoot(f *testing.F) {
	for _, s := range [][2]string{
		{"/etc/pid_flag/pid_flag", "/etc/pid_flag/pid_flag"},
		{"/link", "/outside"},
		{"/link", "../outside"},
		{"/link/x", "../"},
		{"/dir/link", "../../../outside"},
		{"/link", "/proc/self/root/outside"},
		{"/fifo", "x"},
		{"/big", "x"},
		{"/../outside", "x"},
		{"/link", "fifo"},
		{"", ""},
	} {
		f.Add(s[0], s[1])
	}
	const secret = "OUTSIDE THE ROOT"
	f.Fuzz(func(t *testing.T, path, target string) {
		if strings.ContainsRune(path, 0) || strings.ContainsRune(target, 0) || target == "" {
			return
		}
		top := t.TempDir()
		root := filepath.Join(top, "root")
		for _, d := range []string{"etc/pid_flag", "dir", "outside"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write := func(p, s string) {
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// What lies outside the root, where an escaping path or link would lead.
		write(filepath.Join(top, "outside"), secret)
		write(filepath.Join(root, "etc/pid_flag/pid_flag"), "flag")
		write(filepath.Join(root, "big"), strings.Repeat("x", 64))
		if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, l := range []string{"link", "dir/link"} {
			if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
				return // a target the file system does not take
			}
		}
		const max = 32
		b, err := readInRoot(root, path, max)
		if err != nil {
			return
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("readInRoot(%q) with a link to %q read the file outside the root", path, target)
		}
		if len(b) > max {
			t.Fatalf("readInRoot(%q) read %d bytes, over its %d", path, len(b), max)
		}
	})
}

// readFlag reads the sidecar's own flag file: what it returns is never blank (a blank flag
// matches every container with an empty file), trimmed as the container's is compared, and
// within maxFlagSize; a file it refuses gets an error naming it.
func FuzzReadFlag(f *testing.F) {
	for _, s := range []string{"flag", " flag\n", "", " \n\t", strings.Repeat("x", maxFlagSize+1), "a b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		p := filepath.Join(t.TempDir(), "pid_flag")
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		flag, err := readFlag(p)
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("the refusal does not name the file: %v", err)
			}
			if len(content) <= maxFlagSize && strings.TrimSpace(string(content)) != "" {
				t.Errorf("a flag %q refused: %v", content, err)
			}
			return
		}
		if flag == "" || flag != strings.TrimSpace(flag) || len(flag) > maxFlagSize || flag != strings.TrimSpace(string(content)) {
			t.Errorf("readFlag of %q = %q", content, flag)
		}
	})
}
