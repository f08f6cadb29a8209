package resctrlfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// Reading is one counter of one monitoring domain of a group.
type Reading struct {
	Domain string // mon_data subdirectory, e.g. "mon_L3_00", "mon_PERF_PKG_00"
	// Sub is the SNC node directory in Domain the file is in ("mon_sub_L3_01"), read only by
	// a MonReader with Subdomains; "" for Domain's own file, which with SNC is the sum over
	// the cache's nodes.
	Sub   string  `json:",omitempty"`
	Name  string  // counter file, e.g. "mbm_total_bytes", "core_energy"
	Value float64 // as the kernel printed it (AET values have decimals)
	// Cumulative: a counter that only grows (mbm_*, AET energy and activity); otherwise a
	// gauge (llc_occupancy).
	Cumulative bool
	Unit       string // UCUM: "By", "J", "nF"; "" when unknown
}

// Missing is a counter file that gave no number: no sample, never a zero.
type Missing struct {
	Domain, Name string
	Sub          string `json:",omitempty"` // as Reading's
	// Reason is the kernel's word ("Unavailable", "Error", "Unassigned"), or "unreadable"
	// or "malformed" when the file could not be read or held something else.
	Reason string
}

// Reasons a counter has no sample, beside the kernel's own words.
const (
	ReasonUnreadable = "unreadable"
	ReasonMalformed  = "malformed"
)

// maxCounterFile bounds one counter file: a number is a few dozen bytes.
const maxCounterFile = 256

// meta is each known counter's kind and unit, as goresctrl's pkg/monitor gives them (it
// does not export its table; TestMetaMatchesGoresctrl holds the two together). Unknown
// counters are gauges with no unit, as goresctrl has them.
var meta = map[string]struct {
	cumulative bool
	unit       string
}{
	LLCOccupancy: {false, "By"},
	MBMTotal:     {true, "By"},
	MBMLocal:     {true, "By"},
	CoreEnergy:   {true, "J"},
	Activity:     {true, "nF"},
}

// The counters resctrl-mon knows a kind and unit for, as resctrl names their mon_data files.
const (
	LLCOccupancy = "llc_occupancy"
	MBMTotal     = "mbm_total_bytes"
	MBMLocal     = "mbm_local_bytes"
	CoreEnergy   = "core_energy" // Intel AET, PERF_PKG domains
	Activity     = "activity"    // Intel AET, PERF_PKG domains
)

// Counters lists the known counters (CounterMeta has a kind and unit for each).
var Counters = []string{LLCOccupancy, MBMTotal, MBMLocal, CoreEnergy, Activity}

// CounterMeta returns a counter's kind and unit.
func CounterMeta(name string) (cumulative bool, unit string) {
	m := meta[name]
	return m.cumulative, m.unit
}

// monFile is one counter file of a mon_data layout: mon_data/domain[/sub]/name.
type monFile struct{ domain, sub, name string }

func (f monFile) path() string { return filepath.Join(f.domain, f.sub, f.name) }

// subPrefix begins the name of an SNC node's directory inside a domain's: the kernel's
// mkdir_mondata_subdir() makes mon_sub_<resource>_<node id> in mon_<resource>_<cache id>.
const subPrefix = "mon_sub_"

// listMonData reads every counter of the group at dir (an absolute group directory), listing
// its mon_data: readings, the counters with no sample and why, and the layout it listed; with
// subs, the SNC nodes' files too. It only reads, so it is safe for status and the exporter
// while hooks change groups; a group that vanished meanwhile is an error wrapping
// os.ErrNotExist.
func listMonData(dir string, subs bool) ([]Reading, []Missing, []monFile, error) {
	monData := filepath.Join(dir, "mon_data")
	domains, err := os.ReadDir(monData)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read counters of %s: %w", dir, err)
	}
	var layout []monFile
	for _, d := range domains {
		if !d.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(monData, d.Name()))
		if err != nil {
			continue // a domain that raced away
		}
		for _, f := range files {
			switch {
			case !f.IsDir():
				layout = append(layout, monFile{domain: d.Name(), name: f.Name()})
			case subs && strings.HasPrefix(f.Name(), subPrefix):
				layout = append(layout, listSub(monData, d.Name(), f.Name())...)
			}
		}
	}
	readings, missing, _ := readLayout(dir, layout)
	return readings, missing, layout, nil
}

// listSub lists the files of an SNC node's directory.
func listSub(monData, domain, sub string) []monFile {
	files, err := os.ReadDir(filepath.Join(monData, domain, sub))
	if err != nil {
		return nil // a node that raced away
	}
	var out []monFile
	for _, f := range files {
		if !f.IsDir() {
			out = append(out, monFile{domain: domain, sub: sub, name: f.Name()})
		}
	}
	return out
}

// readLayout reads the counter files of layout in the group at dir. complete is false when
// one of them is not there (the layout or the group changed); the rest are still read.
func readLayout(dir string, layout []monFile) (out []Reading, missing []Missing, complete bool) {
	complete = true
	for _, f := range layout {
		v, reason, err := readCounter(filepath.Join(dir, "mon_data", f.path()))
		if errors.Is(err, unix.ENOENT) {
			complete = false
			continue
		}
		if reason != "" {
			missing = append(missing, Missing{Domain: f.domain, Sub: f.sub, Name: f.name, Reason: reason})
			continue
		}
		cum, unit := CounterMeta(f.name)
		out = append(out, Reading{Domain: f.domain, Sub: f.sub, Name: f.name, Value: v, Cumulative: cum, Unit: unit})
	}
	return out, missing, complete
}

// readCounter reads a counter file with one read(2): the kernel makes its whole text at each
// read. Plain system calls (sysfile): a snapshot and a scrape read every counter of every
// group, and os.Open would add five calls to each for the runtime's poller.
// err is the open's error, so a file that is not there can be told from one that is.
func readCounter(path string) (float64, string, error) {
	fd, err := sysfile.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		return 0, ReasonUnreadable, err
	}
	defer func() { _ = unix.Close(fd) }()
	b := make([]byte, maxCounterFile+1)
	n, err := unix.Read(fd, b)
	for errors.Is(err, unix.EINTR) {
		n, err = unix.Read(fd, b)
	}
	if err != nil || n <= 0 {
		return 0, ReasonUnreadable, nil
	}
	v, reason := ParseCounter(b[:n])
	return v, reason, nil
}

// ParseCounter parses a counter file's content: a non-negative number (AET ones have
// decimals), or one of the kernel's words for "no sample", returned as the reason.
func ParseCounter(b []byte) (v float64, reason string) {
	if len(b) > maxCounterFile {
		return 0, ReasonMalformed
	}
	s := strings.TrimSpace(string(b))
	switch s {
	case "Unavailable", "Error", "Unassigned":
		return 0, s
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v != v || v > 1e300 || strings.ContainsAny(s, "xXpPnNiI_") {
		// ParseFloat also takes hex floats, "Inf", "NaN" and underscores: the kernel
		// prints none of them.
		return 0, ReasonMalformed
	}
	return v, ""
}

// DomainID splits a mon_data directory name into its resource and domain id:
// "mon_L3_01" is ("L3", "1"), "mon_PERF_PKG_00" is ("PERF_PKG", "0"). The id is the
// kernel's, not a position in a listing.
func DomainID(dir string) (resource, id string, err error) {
	rest, ok := strings.CutPrefix(dir, "mon_")
	i := strings.LastIndexByte(rest, '_')
	if !ok || i <= 0 || i == len(rest)-1 {
		return "", "", fmt.Errorf("mon_data domain %q: not mon_<resource>_<id>", dir)
	}
	n, err := strconv.ParseUint(rest[i+1:], 10, 32)
	if err != nil {
		return "", "", errors.Join(fmt.Errorf("mon_data domain %q: id is not a number", dir), err)
	}
	return rest[:i], strconv.FormatUint(n, 10), nil
}

// SubdomainID splits an SNC node's directory name into its resource and node id:
// "mon_sub_L3_03" is ("L3", "3"). The id is the kernel's (the node's), not a position.
func SubdomainID(dir string) (resource, id string, err error) {
	rest, ok := strings.CutPrefix(dir, subPrefix)
	if !ok {
		return "", "", fmt.Errorf("mon_data node %q: not %s<resource>_<id>", dir, subPrefix)
	}
	resource, id, err = DomainID("mon_" + rest)
	if err != nil {
		return "", "", fmt.Errorf("mon_data node %q: %w", dir, err)
	}
	return resource, id, nil
}
