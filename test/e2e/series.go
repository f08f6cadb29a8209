package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// SeriesValue returns the value of the series `name{labels}` (labels as exposed, sorted), and
// whether it is there.
func SeriesValue(body, series string) (float64, bool) {
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// RandomName is prefix and 8 random hex digits: a name no other test or run uses.
func RandomName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
