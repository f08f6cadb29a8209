// Package bench holds what the project's benchmarks share. They print ratios against a
// baseline measured in the same run, from medians: these machines are shared, and one run
// slowed by another tenant moves a mean by more than the few per cent being measured.
package bench

import (
	"slices"
	"time"
)

// Median is the middle of the durations (the mean of the two middle ones for an even count),
// 0 for none.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
