// Package sidecar is `resctrl-mon sidecar`: it exports one container's cgroup v2 pressure
// (PSI) to Prometheus from a sidecar in the container's pod, a drop-in for the PSI sidecar
// (cgroup_monitor_sc) it replaces, with the same PORT variable and the same discovery.
//
// The pod shares its process namespace (shareProcessNamespace), so the sidecar sees the
// container's processes in /proc. The container is found, in the order the options are
// checked, by
//   - --pid: a process id, in the sidecar's process namespace;
//   - --container-name: the Kubernetes container name, from the bind mount the kubelet
//     makes for every container's termination log (<kubelet>/pods/<pod uid>/containers/
//     <name>/<id>), visible in the process's mountinfo without any privilege;
//   - otherwise cgroup_monitor_sc's flag files: the process whose /etc/pid_flag/pid_flag, read
//     through /proc/<pid>/root, holds what the sidecar's /etc/pid_flag_sc/pid_flag holds.
//
// Finding the container is retried with a bounded backoff while /healthz answers 503 with
// the reason, so a container that starts late, restarts or goes away never makes the
// sidecar panic or hang; it follows the container's cgroup directory (cgroup.Host.ProcessDir)
// until that is gone, then looks again. Metrics are read at scrape time (lib/psimetrics),
// and with CompatSeedMetrics cgroup_monitor_sc's gauges are exported too, same names and
// labels.
package sidecar

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
)

// Defaults, cgroup_monitor_sc's where it had one, so its deployments run unchanged.
const (
	DefaultPort       = 8888 // cgroup_monitor_sc's when PORT is not set
	DefaultFlagPath   = "/etc/pid_flag/pid_flag"
	DefaultFlagFile   = "/etc/pid_flag_sc/pid_flag"
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
	maxFlagSize       = 4096
)

// Config is what the command line and environment give.
type Config struct {
	// Address is the host to listen on; empty for every interface, where
	// cgroup_monitor_sc's Service finds it.
	Address string
	// Port is the TCP port; 0 picks a free one (the address is logged).
	Port int
	// Proc is where procfs is mounted.
	Proc string

	// PID selects the container by a process id (0: not by pid).
	PID int
	// ContainerName selects it by its Kubernetes container name ("": not by name).
	ContainerName string
	// FlagPath is the container's flag file, a path inside its root; FlagFile is the
	// sidecar's own copy, whose content the container's must match.
	FlagPath, FlagFile string

	// Label is the value of the metrics' container label; by default the container name,
	// else the flag's content, else empty.
	Label string
	// CompatSeedMetrics also exports cgroup_monitor_sc's cgroup_monitor_sc_monitored_*_psi
	// gauges.
	CompatSeedMetrics bool
	// Averages also exports the kernel's 10/60/300 s averages as ratios.
	Averages bool

	// MinBackoff and MaxBackoff bound the wait between two searches for the container.
	MinBackoff, MaxBackoff time.Duration
}

// ParsePort reads the PORT variable: a decimal port number; empty means the default, as
// cgroup_monitor_sc's deployments expect.
func ParsePort(s string) (int, error) {
	if s == "" {
		return DefaultPort, nil
	}
	if len(s) > 5 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("port %q is not a number from 0 to 65535", clip.String(s))
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 0 to 65535", clip.String(s))
	}
	return n, nil
}

// Validate checks everything that needs no file, and says all that is wrong at once.
func (c Config) Validate() error {
	var errs []error
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d is not from 0 to 65535", c.Port))
	}
	if _, _, err := net.SplitHostPort(c.Address); err == nil {
		errs = append(errs, fmt.Errorf("address %q holds a port: give the port with --port or PORT", c.Address))
	} else if strings.ContainsAny(c.Address, " \t\n/") {
		errs = append(errs, fmt.Errorf("address %q is not a host name or IP address", clip.String(c.Address)))
	}
	if c.Proc == "" || !filepath.IsAbs(c.Proc) {
		errs = append(errs, fmt.Errorf("proc %q is not an absolute path", c.Proc))
	}
	switch {
	case c.PID < 0:
		errs = append(errs, fmt.Errorf("pid %d is negative", c.PID))
	case c.PID > 0 && c.ContainerName != "":
		errs = append(errs, errors.New("give --pid or --container-name, not both"))
	}
	if c.ContainerName != "" && !isContainerName(c.ContainerName) {
		errs = append(errs, fmt.Errorf("container name %q is not a Kubernetes container name (lowercase letters, digits and '-', at most 63)", clip.String(c.ContainerName)))
	}
	if c.PID == 0 && c.ContainerName == "" {
		if !filepath.IsAbs(c.FlagPath) || filepath.Clean(c.FlagPath) != c.FlagPath || c.FlagPath == "/" {
			errs = append(errs, fmt.Errorf("flag path %q is not an absolute, clean path to a file", c.FlagPath))
		}
		if c.FlagFile == "" {
			errs = append(errs, errors.New("no flag file"))
		}
	}
	if c.MinBackoff <= 0 || c.MaxBackoff < c.MinBackoff || c.MaxBackoff > 10*time.Minute {
		errs = append(errs, fmt.Errorf("backoff from %v to %v: want 0 < min <= max <= 10m", c.MinBackoff, c.MaxBackoff))
	}
	return errors.Join(errs...)
}

// readFlag reads the sidecar's own flag file: it must be there and not blank (a blank flag
// would match every container that has an empty file at the flag path).
func readFlag(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("flag file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFlagSize+1))
	if err != nil {
		return "", fmt.Errorf("flag file %s: %w", path, err)
	}
	if len(b) > maxFlagSize {
		return "", fmt.Errorf("flag file %s: longer than %d bytes", path, maxFlagSize)
	}
	flag := strings.TrimSpace(string(b))
	if flag == "" {
		return "", fmt.Errorf("flag file %s is blank: it would match any container with an empty flag file", path)
	}
	return flag, nil
}

// isContainerName is Kubernetes's rule for container names (an RFC 1123 label).
func isContainerName(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
