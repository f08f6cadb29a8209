package resctrlsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// FSType is the filesystem type a mounted simulator shows in /proc/self/mountinfo
// ("fuse." + the FUSE subtype), and the source it shows: tools that look for a resctrl mount
// by type can be told about it.
const (
	FSType   = "fuse.resctrl"
	FSSource = "resctrl"
)

// Sim is a mounted simulator. Its methods inject faults and show its state; they are safe
// for concurrent use.
type Sim struct {
	Dir    string
	m      *model
	root   *dirNode
	host   Host
	server *fuse.Server
	served chan struct{} // closed when the FUSE serve loop has ended: the mount is gone
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
	err    error
}

// ErrPreflight is wrapped by Mount's errors when the host cannot run the simulator at all
// (no /dev/fuse, not root): tests can skip on it where that is allowed.
var ErrPreflight = errors.New("resctrlsim cannot run here")

// Mount mounts a simulator on dir, which must exist.
func Mount(dir string, opts Options) (*Sim, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("resctrlsim options: %w", err)
	}
	for _, line := range opts.aet.off {
		opts.Logf("%s", line) // what the kernel logs at boot
	}
	if err := preflight(); err != nil {
		return nil, err
	}
	clearStaleMount(dir)
	host, err := newProcHost()
	if err != nil {
		return nil, fmt.Errorf("resctrlsim on %s: %w", dir, err)
	}
	s := &Sim{Dir: dir, m: newModel(opts, host), host: host, served: make(chan struct{}), stop: make(chan struct{})}
	// The kernel may cache names and attributes for a second: every change that goes through
	// the mount (mkdir, rmdir) updates its cache itself, and the one change that does not,
	// a simulated re-mount, invalidates what it removed (Reset). Without the cache every
	// path component costs a FUSE round trip. Negative entries are never cached, so a group
	// made by mkdir is seen at once.
	zero, second := time.Duration(0), time.Second
	root := &dirNode{m: s.m, kind: dirGroup}
	s.root = root
	s.server, err = fs.Mount(dir, root, &fs.Options{
		EntryTimeout:    &second,
		AttrTimeout:     &second,
		NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			FsName:        FSSource,
			Name:          "resctrl",
			AllowOther:    true,
			DirectMount:   true,
			DisableXAttrs: true,
			Debug:         os.Getenv("RESCTRLSIM_FUSE_DEBUG") != "",
		},
	})
	if err != nil {
		_ = host.Close()
		return nil, fmt.Errorf("resctrlsim: mount %s: %w", dir, err)
	}
	go func() { s.server.Wait(); close(s.served) }()
	s.wg.Add(1)
	go s.pumpEvents()
	if opts.limbo() {
		s.wg.Add(1)
		go s.tick(opts.LimboInterval, s.limboWorkerPass)
	}
	if opts.SettleInterval > 0 {
		s.wg.Add(1)
		go s.tick(opts.SettleInterval, s.m.settleAll)
	}
	return s, nil
}

// preflight says clearly what is missing before anything is mounted.
func preflight() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: it needs root (mount(2) needs CAP_SYS_ADMIN and the proc connector CAP_NET_ADMIN)", ErrPreflight)
	}
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w: open /dev/fuse: %w (load the fuse module, or give the container the device)", ErrPreflight, err)
	}
	return f.Close()
}

// clearStaleMount detaches a FUSE mount on dir whose server died (every access fails with
// ENOTCONN), so a crashed earlier run does not block this one.
func clearStaleMount(dir string) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); errors.Is(err, unix.ENOTCONN) {
		_ = unix.Unmount(dir, unix.MNT_DETACH)
	}
}

// pumpEvents applies proc events as they arrive, so the kernel's socket buffer never
// overflows while nobody touches the filesystem.
func (s *Sim) pumpEvents() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		if s.host.WaitEvents(100 * time.Millisecond) {
			s.m.lock()
			s.m.unlock()
		}
	}
}

// tick runs f every interval until the simulator stops: the kernel's periodic work (the
// settling of counters, the limbo worker).
func (s *Sim) tick(every time.Duration, f func()) {
	defer s.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			f()
		}
	}
}

// Unmount unmounts the simulator and stops its goroutines. A busy mount is retried, then
// detached: a simulator never leaves a mount behind.
func (s *Sim) Unmount() error {
	s.once.Do(func() {
		var err error
		select {
		case <-s.served: // unmounted from outside (umount, fusermount -u): nothing to undo
		default:
			err = s.unmount()
		}
		close(s.stop)
		s.wg.Wait()
		s.err = errors.Join(err, s.host.Close())
		if s.err != nil {
			s.err = fmt.Errorf("resctrlsim: unmount %s: %w", s.Dir, s.err)
		}
	})
	return s.err
}

// unmount takes the mount away: retried while it is busy, then detached.
func (s *Sim) unmount() error {
	var err error
	for i := range 20 {
		if err = s.server.Unmount(); err == nil {
			return nil
		}
		time.Sleep(time.Duration(i+1) * 10 * time.Millisecond)
	}
	if derr := unix.Unmount(s.Dir, unix.MNT_DETACH); derr != nil {
		return errors.Join(err, fmt.Errorf("detach: %w", derr))
	}
	return nil
}

// Wait blocks until the filesystem is unmounted, by Unmount or from outside (umount).
func (s *Sim) Wait() { <-s.served }

// Do carries out a control command; status returns the state as JSON.
func (s *Sim) Do(c Command) (string, error) {
	switch c.Verb {
	case "status":
		b, err := json.Marshal(s.Status())
		return string(b), err
	case "reset":
		s.Reset()
		return "ok", nil
	}
	s.m.applyCommand(c)
	if c.Verb == "latency" && c.Op == OpLookup {
		s.forgetMonNames()
	}
	return "ok", nil
}

// FailNext makes the next n operations of op fail with errno.
func (s *Sim) FailNext(op Op, n int, errno syscall.Errno) {
	s.m.applyCommand(Command{Verb: "fail", Op: op, Count: n, Errno: errno})
}

// SetLatency makes every op sleep d first; 0 stops it.
func (s *Sim) SetLatency(op Op, d time.Duration) {
	_, _ = s.Do(Command{Verb: "latency", Op: op, Delay: d})
}

// forgetMonNames makes the kernel forget the monitoring groups' names it cached, so that
// the next access to each looks it up (OpLookup's latency applies at once).
func (s *Sim) forgetMonNames() {
	s.m.mu.Lock()
	var names []string
	for name := range s.m.root.mons {
		names = append(names, name)
	}
	s.m.mu.Unlock()
	// Outside the model's lock: the kernel may call back into the filesystem.
	if mg := s.root.GetChild("mon_groups"); mg != nil {
		for _, name := range names {
			_ = mg.NotifyEntry(name)
		}
	}
}

// SetCounterState makes counter (a mon_data file name, or "*") read state (Unavailable,
// Error, Unassigned; "clear" to stop) in group (a path like "mon_groups/x", or "*").
func (s *Sim) SetCounterState(counter, state, group string) {
	s.m.applyCommand(Command{Verb: "counter", Counter: counter, State: state, Group: group})
}

// Reset forgets every group, as a re-mount of resctrl does, and makes the kernel forget the
// names it cached for them.
func (s *Sim) Reset() {
	s.m.mu.Lock()
	var ctrls, mons []string
	for _, e := range groupEntries(kindRoot, s.m.opts) {
		ctrls = append(ctrls, e.name) // their nodes point at the old root group
	}
	for name := range s.m.root.ctrls {
		ctrls = append(ctrls, name)
	}
	for name := range s.m.root.mons {
		mons = append(mons, name)
	}
	s.m.mu.Unlock()
	s.m.applyCommand(Command{Verb: "reset"})
	// Outside the model's lock: the kernel may call back into the filesystem.
	if mg := s.root.GetChild("mon_groups"); mg != nil {
		for _, name := range mons {
			_ = mg.NotifyEntry(name)
		}
	}
	for _, name := range ctrls {
		_ = s.root.NotifyEntry(name)
	}
}

// ClearFaults removes every injected fault.
func (s *Sim) ClearFaults() { s.m.applyCommand(Command{Verb: "clear"}) }
