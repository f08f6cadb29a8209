package podevents

import "time"

// bucket is a token bucket: burst tokens at most, one more every per. It holds two numbers,
// so one per tracked pod costs nothing worth bounding beyond the pods tracked.
type bucket struct {
	tokens float64
	last   time.Time
}

// take spends a token at now, refilling first; false when there is none.
func (b *bucket) take(now time.Time, burst int, per time.Duration) bool {
	if b.last.IsZero() {
		b.tokens = float64(burst)
	} else if d := now.Sub(b.last); d > 0 {
		b.tokens = min(float64(burst), b.tokens+float64(d)/float64(per))
	}
	if !now.Before(b.last) {
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Per pod: a pod has four reasons, each posted once, so its bucket only matters for a pod
// whose records come and go (a pod of several containers' groups, granularity container).
const (
	podBurst = 4
	podEvery = time.Minute
)
