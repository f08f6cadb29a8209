package resctrlfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ReadLimboThreshold says whether RMIDs a removal frees from the resctrl mount at root go to
// the kernel's limbo (whenever llc_occupancy is monitored: see the package comment, "RMIDs
// and limbo"), and the llc_occupancy (bytes, in every L3 domain) under which the limbo
// worker frees one. A group whose own occupancy is already below it gives an RMID usable
// after the worker's next pass; one above it, only once its lines leave the cache.
func ReadLimboThreshold(root string) (threshold uint64, on bool, err error) {
	b, err := os.ReadFile(filepath.Join(root, "info/L3_MON/mon_features"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil // no L3 monitoring at all
	}
	if err != nil {
		return 0, false, fmt.Errorf("resctrl limbo: %w", err)
	}
	if !slices.Contains(strings.Fields(string(b)), "llc_occupancy") {
		return 0, false, nil
	}
	b, err = os.ReadFile(filepath.Join(root, "info/L3_MON/max_threshold_occupancy"))
	if err != nil {
		return 0, true, fmt.Errorf("resctrl limbo: %w", err)
	}
	threshold, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("resctrl limbo: info/L3_MON/max_threshold_occupancy %q: %w", strings.TrimSpace(string(b)), err)
	}
	return threshold, true, nil
}
