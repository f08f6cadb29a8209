package resctrlsim

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// parseCPUList parses the kernel's list format: "0-3,8,10-11".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	if s == "" {
		return nil, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > 8191 {
			return nil, fmt.Errorf("bad cpu %q", lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > 8191 {
				return nil, fmt.Errorf("bad cpu range %q", part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// formatCPUList renders CPUs in list format, merging runs into ranges.
func formatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// parseCPUMask parses the kernel's hex mask format, with optional comma separators.
func parseCPUMask(s string) ([]int, error) {
	n, ok := new(big.Int).SetString(strings.ReplaceAll(s, ",", ""), 16)
	if !ok || n.BitLen() > 8192 {
		return nil, fmt.Errorf("bad cpu mask %q", s)
	}
	var cpus []int
	for c := 0; c < n.BitLen(); c++ {
		if n.Bit(c) == 1 {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

func formatCPUMask(cpus []int) string {
	n := new(big.Int)
	for _, c := range cpus {
		n.SetBit(n, c, 1)
	}
	return n.Text(16)
}

// writeCPUs sets a group's cpus (mask) or cpus_list. Like the kernel, only online CPUs are
// accepted, and a MON group's CPUs must belong to its control group.
func (m *model) writeCPUs(g *group, data []byte, list bool) syscall.Errno {
	m.lastCmd = "ok"
	if g.dead {
		return syscall.ENOENT
	}
	s := strings.TrimSpace(string(data))
	parse := parseCPUMask
	if list {
		parse = parseCPUList
	}
	cpus, err := parse(s)
	if err != nil {
		return m.fail(syscall.EINVAL, "Bad CPU list/mask")
	}
	online := onlineCPUs()
	for _, c := range cpus {
		if !slices.Contains(online, c) {
			return m.fail(syscall.EINVAL, "Can only assign online CPUs")
		}
		if g.kind == kindMon && g.parent.kind != kindRoot && !slices.Contains(g.parent.cpus, c) {
			return m.fail(syscall.EINVAL, "Only parent CPUs can be assigned")
		}
	}
	g.cpus = cpus
	return 0
}

// defaultSchemata is the schemata of a fresh control group: every cache way in every domain.
func defaultSchemata(o Options) string {
	var b strings.Builder
	b.WriteString("L3:")
	for d := range o.L3Domains {
		if d > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%d=%s", d, cbmMask)
	}
	return b.String()
}

// cbmMask is info/L3/cbm_mask: an 11-way cache.
const cbmMask = "7ff"

// writeSchemata accepts "L3:<id>=<hex mask>;..." lines, the only resource the simulator has.
func (m *model) writeSchemata(g *group, data []byte) syscall.Errno {
	m.lastCmd = "ok"
	if g.dead {
		return syscall.ENOENT
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		res, doms, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || res != "L3" {
			return m.fail(syscall.EINVAL, "Unknown or unsupported resource name '%s'", res)
		}
		for dom := range strings.SplitSeq(doms, ";") {
			id, mask, ok := strings.Cut(dom, "=")
			d, err := strconv.Atoi(strings.TrimSpace(id))
			if !ok || err != nil || d < 0 || d >= m.opts.L3Domains {
				return m.fail(syscall.EINVAL, "Missing or invalid domain '%s'", dom)
			}
			v, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			if err != nil || v == 0 || v > 0x7ff {
				return m.fail(syscall.EINVAL, "Non-consecutive bit mask or out of range '%s'", mask)
			}
		}
	}
	g.schemata = strings.TrimSpace(string(data))
	return 0
}
