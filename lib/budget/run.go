package budget

import "time"

// Run runs work and waits for it at most d. err is nil when work ended in time, and v is
// what it returned. Past d, work goes on in the background (its result is dropped) and err
// is ErrExhausted itself. With a Pool, work runs on one of its workers; when every one is
// busy, work is not started at all and err is ErrNotStarted itself, at once. A nil Pool runs
// work on a goroutine of its own. The errors are the bare sentinels: the caller says what
// they mean for its work.
func Run[T any](p *Pool, d time.Duration, work func() T) (v T, err error) {
	res := make(chan T, 1) // buffered: a late result is dropped, not blocked on
	if p == nil {
		go func() { res <- work() }()
	} else if !p.run(func() func() { v := work(); return func() { res <- v } }) {
		return v, ErrNotStarted
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case v = <-res:
		return v, nil
	case <-t.C:
		return v, ErrExhausted
	}
}
