package permission

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// capDACOverride is CAP_DAC_OVERRIDE's bit (linux/capability.h).
const capDACOverride = 1

// Self is this process, from /proc/self/status; a status that cannot be read leaves it
// unknown, and the hints then name both causes.
func Self() Process {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return Process{}
	}
	defer func() { _ = f.Close() }()
	p, err := ParseStatus(f)
	if err != nil {
		return Process{}
	}
	return p
}

// ParseStatus reads a /proc/<pid>/status: its CapEff line, the effective capabilities as
// 64 hex digits' worth of bits.
func ParseStatus(r io.Reader) (Process, error) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		v, ok := strings.CutPrefix(s.Text(), "CapEff:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		caps, err := strconv.ParseUint(v, 16, 64)
		if err != nil {
			return Process{}, fmt.Errorf("status: CapEff %q: %w", v, err)
		}
		return Process{Known: true, DACOverride: caps&(1<<capDACOverride) != 0}, nil
	}
	if err := s.Err(); err != nil {
		return Process{}, fmt.Errorf("status: %w", err)
	}
	return Process{}, fmt.Errorf("status: no CapEff line")
}
