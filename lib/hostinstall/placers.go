package hostinstall

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// Placer is a process that may still make a group or write a task: the NRI adapter, a
// reconcile loop, a hook in flight. Groups released while one runs can be made again
// behind the release, and then nothing ever removes them (an RMID lost until reboot).
type Placer struct {
	PID int
	Cmd string
}

// placerName says whether a /proc/PID/cmdline is a placer's, and names it. cmdline is read
// rather than the exe link: reading the link of another container's process is a ptrace
// check that the runtimes' AppArmor profiles refuse, cmdline is readable by anyone.
func placerName(cmdline []byte) (string, bool) {
	args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
	if len(args) == 0 || len(args[0]) == 0 {
		return "", false
	}
	switch filepath.Base(string(args[0])) {
	case "resctrl-mon-nri", "resctrl-mon-hook", "resctrl-mon-runtime":
		return filepath.Base(string(args[0])), true
	case "resctrl-mon":
		// reconcile makes groups; serve, status, top and host only read or take away.
		if slices.ContainsFunc(args[1:], func(a []byte) bool { return string(a) == "reconcile" }) {
			return "resctrl-mon reconcile", true
		}
	}
	return "", false
}

// Placers lists the placers procDir (the host's /proc, with the pod's hostPID) shows. A
// process that ends while it is read is not there.
func Placers(procDir string) ([]Placer, error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil, fmt.Errorf("list processes in %s: %w", procDir, err)
	}
	var out []Placer
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procDir, e.Name(), "cmdline"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(procDir, e.Name(), "cmdline"), err)
		}
		if name, ok := placerName(b); ok {
			out = append(out, Placer{PID: pid, Cmd: name})
		}
	}
	return out, nil
}
