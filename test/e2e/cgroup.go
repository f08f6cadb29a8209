package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CgroupTasks returns the id of every thread (of every process) in pid's cgroup and its
// descendant cgroups, sorted: what a hook that follows a container's tasks should find. On a
// machine with the cgroup v1 pids controller (as on hybrid machines, where runc, crun and
// podman put containers in every v1 hierarchy) it reads that hierarchy's tasks files;
// otherwise the cgroup v2 hierarchy's cgroup.threads files.
func CgroupTasks(pid int) ([]int, error) {
	dir, v2, err := CgroupDir(pid)
	if err != nil {
		return nil, err
	}
	file := "tasks"
	if v2 {
		file = "cgroup.threads" // exists in every v2 cgroup, and lists threads, not processes
	}
	var tids []int
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a child cgroup removed while walking
		}
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(filepath.Join(path, file))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, f := range strings.Fields(string(data)) {
			tid, err := strconv.Atoi(f)
			if err != nil {
				return fmt.Errorf("parse %s: %w", filepath.Join(path, file), err)
			}
			tids = append(tids, tid)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cgroup tasks of pid %d: %w", pid, err)
	}
	slices.Sort(tids)
	return slices.Compact(tids), nil
}

// CgroupDir returns the host directory of pid's cgroup in the v1 pids hierarchy where there is
// one (v2 false), else in the cgroup v2 hierarchy (v2 true).
func CgroupDir(pid int) (dir string, v2 bool, err error) {
	procPath := fmt.Sprintf("/proc/%d/cgroup", pid)
	data, err := os.ReadFile(procPath)
	if err != nil {
		return "", false, fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	// Lines are "hierarchy-ID:controller-list:path"; cgroup v2's is "0::path".
	var pidsPath, unifiedPath string
	havePids, haveUnified := false, false
	for line := range strings.Lines(string(data)) {
		parts := strings.SplitN(strings.TrimRight(line, "\n"), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unifiedPath, haveUnified = parts[2], true
		} else if slices.Contains(strings.Split(parts[1], ","), "pids") {
			pidsPath, havePids = parts[2], true
		}
	}
	mounts, err := readCgroupMounts()
	if err != nil {
		return "", false, err
	}
	if havePids {
		for _, m := range mounts {
			if m.fstype == "cgroup" && slices.Contains(m.superOpts, "pids") {
				if d, ok := m.dirOf(pidsPath); ok {
					return d, false, nil
				}
			}
		}
	}
	if haveUnified {
		for _, m := range mounts {
			if m.fstype == "cgroup2" {
				if d, ok := m.dirOf(unifiedPath); ok {
					return d, true, nil
				}
			}
		}
	}
	return "", false, fmt.Errorf("cgroup of pid %d: no mounted pids or cgroup2 hierarchy holds it (%s: %q)", pid, procPath, data)
}

// cgroupMount is a cgroup filesystem mount from /proc/self/mountinfo.
type cgroupMount struct {
	root, mountPoint, fstype string
	superOpts                []string
}

// dirOf returns the directory under this mount of the cgroup at path (a path in the
// hierarchy, as /proc/PID/cgroup gives it), if the mount shows that cgroup.
func (m cgroupMount) dirOf(path string) (string, bool) {
	if m.root == "/" {
		return filepath.Join(m.mountPoint, path), true
	}
	if path == m.root || strings.HasPrefix(path, m.root+"/") {
		return filepath.Join(m.mountPoint, strings.TrimPrefix(path, m.root)), true
	}
	return "", false
}

// cgroupDirs returns the directory of the cgroup at path (as /proc/PID/cgroup names it) in
// every mounted hierarchy that has it. It returns none for a hierarchy's root ("/" or "", what
// a pod with no cgroup of its own reports): a caller removing what it is given must never get
// there.
func cgroupDirs(path string) ([]string, error) {
	if !strings.HasPrefix(path, "/") || strings.Trim(path, "/") == "" {
		return nil, nil
	}
	mounts, err := readCgroupMounts()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, m := range mounts {
		if dir, ok := m.dirOf(path); ok {
			dirs = append(dirs, dir)
		}
	}
	return dirs, nil
}

// readCgroupMounts returns the cgroup and cgroup2 mounts in this process's mount namespace.
func readCgroupMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	return parseCgroupMounts(bufio.NewScanner(f))
}

// parseCgroupMounts parses mountinfo lines: "ID parent major:minor root mount-point options
// [optional fields…] - fstype source super-options".
func parseCgroupMounts(sc *bufio.Scanner) ([]cgroupMount, error) {
	var mounts []cgroupMount
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || len(fields) < sep+4 {
			continue
		}
		fstype := fields[sep+1]
		if fstype != "cgroup" && fstype != "cgroup2" {
			continue
		}
		mounts = append(mounts, cgroupMount{
			root:       unescapeMountinfo(fields[3]),
			mountPoint: unescapeMountinfo(fields[4]),
			fstype:     fstype,
			superOpts:  strings.Split(fields[sep+3], ","),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	return mounts, nil
}

// unescapeMountinfo undoes the kernel's octal escapes (\040 for a space, …) in mountinfo paths.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
