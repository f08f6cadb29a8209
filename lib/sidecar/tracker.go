package sidecar

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
)

// Target is the container being watched.
type Target struct {
	PID int    // the process it was found by
	Dir string // its cgroup v2 directory
}

// tracker knows the container, or why there is none. It does its work when asked (by a
// scrape or a probe), never in the background: with a container found, Check reads one
// pressure file to see it is still there; without one, it searches again once the backoff
// since the last search has passed, doubling the backoff up to its maximum. So nothing
// runs between requests, a request never waits for a timer, and a missing container costs
// one search per backoff however often it is asked about.
type tracker struct {
	host     cgroup.Host
	find     finder
	log      *slog.Logger
	now      func() time.Time
	min, max time.Duration
	// fatal, when set, is why no container can ever be ready (no PSI on this host).
	fatal error

	mu     sync.Mutex
	cur    *Target
	status error // why not ready; nil when cur is set
	next   time.Time
	delay  time.Duration
	said   string // the last status logged, so each state is logged once
}

// Check returns the container, or why it is not ready.
func (t *tracker) Check() (Target, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fatal != nil {
		return Target{}, t.fatal
	}
	now := t.now()
	if t.cur != nil {
		_, err := psi.Read(t.cur.Dir, psi.CPU)
		if err == nil {
			return *t.cur, nil
		}
		// Gone (ended, restarted) or unreadable: search again at once.
		t.fail(fmt.Errorf("lost the container (pid %d, cgroup %s): %w", t.cur.PID, t.cur.Dir, err), now, 0)
		t.cur = nil
	}
	if now.Before(t.next) {
		return Target{}, t.status
	}
	tgt, err := t.discover()
	if err != nil {
		t.fail(err, now, min(max(2*t.delay, t.min), t.max))
		return Target{}, err
	}
	t.cur, t.status, t.delay, t.next = &tgt, nil, 0, time.Time{}
	t.say(slog.LevelInfo, "container found", "pid", tgt.PID, "cgroup", tgt.Dir)
	return tgt, nil
}

func (t *tracker) fail(err error, now time.Time, delay time.Duration) {
	t.status, t.delay, t.next = err, delay, now.Add(delay)
	t.say(slog.LevelWarn, "not ready", "reason", err.Error())
}

// say logs a state once, not at every request that finds it unchanged.
func (t *tracker) say(level slog.Level, msg string, args ...any) {
	key := fmt.Sprint(msg, args)
	if key == t.said {
		return
	}
	t.said = key
	t.log.Log(context.Background(), level, msg, args...)
}

func (t *tracker) discover() (Target, error) {
	pid, err := t.find()
	if err != nil {
		return Target{}, err
	}
	dir, err := t.host.ProcessDir(pid)
	if err != nil {
		return Target{}, fmt.Errorf("the container's process %d: no cgroup v2 directory: %w", pid, err)
	}
	if _, err := psi.Read(dir, psi.CPU); err != nil {
		return Target{}, fmt.Errorf("the container's process %d, cgroup %s: pressure not readable: %w", pid, dir, err)
	}
	return Target{PID: pid, Dir: dir}, nil
}
