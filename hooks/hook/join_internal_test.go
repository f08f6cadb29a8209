package hook

import (
	"errors"

	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/aside"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Which records a container joins in the hook's process: a group that is live, or idle with
// its retention lasting past the hook's end; anything Place would make, end or complete is
// the worker's.
func TestLive(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	idle := func(ago time.Duration) *time.Time { at := end.Add(-ago); return &at }
	running := map[string]time.Time{"c1": end.Add(-time.Hour)}
	p := lifecycle.Placement{ContainerID: "c2", Class: ""}
	base := registry.Record{Group: "g", Path: "mon_groups/g", Containers: running}
	for _, tc := range []struct {
		name string
		edit func(*registry.Record)
		p    lifecycle.Placement
		want bool
	}{
		{"live", func(*registry.Record) {}, p, true},
		{"idle within its retention", func(r *registry.Record) { r.Containers, r.IdleSince = nil, idle(time.Minute) }, p, true},
		{"idle, its retention ending before the hook does", func(r *registry.Record) { r.Containers, r.IdleSince = nil, idle(5*time.Minute) }, p, false},
		{"no container and not idle", func(r *registry.Record) { r.Containers = nil }, p, false},
		{"containers and idle", func(r *registry.Record) { r.IdleSince = idle(time.Minute) }, p, false},
		{"pending", func(r *registry.Record) { r.Pending = "no free RMID" }, p, false},
		{"its sandbox ended", func(r *registry.Record) { r.SandboxEnded = true }, p, false},
		{"another class", func(*registry.Record) {}, lifecycle.Placement{ContainerID: "c2", Class: "gold"}, false},
		{"a path not its class's", func(r *registry.Record) { r.Path = "gold/mon_groups/g" }, p, false},
	} {
		r := base
		tc.edit(&r)
		if got := live(r, tc.p, 5*time.Minute, end); got != tc.want {
			t.Errorf("%s: live %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A join whose group ended between its look and Place's Ensure (a reclaim took it, the pod
// ended) answers lifecycle's ErrGroupGone: Place then takes the container back without
// recording a creation failure, and the worker places it afresh.
func TestJoinEnsureOfAGoneGroupIsGroupGone(t *testing.T) {
	t.Parallel()
	calls, err := aside.NewCalls()
	if err != nil {
		t.Skipf("no calls aside here: %v", err)
	}
	defer calls.Close()
	g := &asideGroups{root: t.TempDir(), calls: calls, deadline: time.Now().Add(time.Minute)}
	err = g.Ensure(resctrlfs.Addr{Name: "0a1b2c3d-0000-4000-8000-00000000000a"})
	if !errors.Is(err, lifecycle.ErrGroupGone) {
		t.Fatalf("Ensure of a group that is not there: %v; want lifecycle.ErrGroupGone", err)
	}
}
