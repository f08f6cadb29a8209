package resctrlsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Op names an operation that faults can be injected into.
type Op string

const (
	OpMkdir       Op = "mkdir"        // mkdir of a group
	OpRmdir       Op = "rmdir"        // rmdir of a group
	OpTasksWrite  Op = "tasks-write"  // a write(2) to a tasks file
	OpTasksRead   Op = "tasks-read"   // reading a tasks file
	OpCounterRead Op = "counter-read" // reading a mon_data file
	OpAssignWrite Op = "assign-write" // a write to a group's mbm_L3_assignments
	// OpLookup is the lookup of a monitoring group by name (a stat or an open of a path
	// through it), latency only: setting it makes the kernel forget the names it cached, so
	// the next access asks. A hung stat, as a resctrl whose mutex is held makes one.
	OpLookup Op = "lookup"
)

var ops = []Op{OpMkdir, OpRmdir, OpTasksWrite, OpTasksRead, OpCounterRead, OpAssignWrite, OpLookup}

// counterStates are the words the kernel prints instead of a number when a counter has no
// value; "clear" removes an injected one.
var counterStates = []string{"Unavailable", "Error", "Unassigned"}

// faults is the injected misbehaviour. It lives inside the model, under its mutex.
type faults struct {
	next    map[Op]pendingFault
	latency map[Op]time.Duration
	counter map[counterKey]string
}

type pendingFault struct {
	count int
	errno syscall.Errno
}

type counterKey struct{ name, group string } // group "" or "*": every group

// take consumes one injected failure of op, if any is pending.
func (f *faults) take(op Op) syscall.Errno {
	p, ok := f.next[op]
	if !ok {
		return 0
	}
	p.count--
	if p.count <= 0 {
		delete(f.next, op)
	} else {
		f.next[op] = p
	}
	return p.errno
}

func (f *faults) counterValue(name, group string) (string, bool) {
	for _, k := range []counterKey{{name, group}, {name, "*"}, {"*", group}, {"*", "*"}} {
		if v, ok := f.counter[k]; ok {
			return v, true
		}
	}
	return "", false
}

// injected records an injected failure in last_cmd_status, with the kernel's own words where
// the kernel has some for that failure.
func (m *model) injected(op Op, errno syscall.Errno) syscall.Errno {
	if op == OpMkdir && (errno == syscall.ENOSPC || errno == syscall.EBUSY) {
		return m.fail(errno, "Out of RMIDs")
	}
	return m.fail(errno, "simulated fault in %s: %s", op, unix.ErrnoName(errno))
}

// Command is one fault-injection or control request, as sent over the control socket.
type Command struct {
	Verb     string        // fail, latency, counter, reset, clear, status
	Op       Op            // fail, latency
	Count    int           // fail: how many of the next operations fail
	Errno    syscall.Errno // fail
	Delay    time.Duration // latency
	Counter  string        // counter: a mon_data file name or "*"
	State    string        // counter: Unavailable, Error, Unassigned or clear
	Group    string        // counter: a group path ("" is the root group, "*" every group)
	AllGroup bool          // counter: no group given
}

// ParseCommand parses one line of the control protocol:
//
//	fail <op> <count> <errno>     the next <count> <op>s fail with <errno> (ENOSPC or 28)
//	latency <op> <duration>       every <op> first sleeps <duration> (0 to stop)
//	counter <name|*> <state> [group]  reads of that counter print <state> instead of a number
//	                              (for llc_occupancy <state> may be a number of bytes: limbo.go)
//	reset                         forget every group, as a re-mount of resctrl does
//	clear                         remove every injected fault
//	status                        print the simulator's state as JSON
func ParseCommand(line string) (Command, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return Command{}, fmt.Errorf("empty command")
	}
	c := Command{Verb: f[0]}
	want := map[string]int{"fail": 4, "latency": 3, "reset": 1, "clear": 1, "status": 1}
	if c.Verb == "counter" {
		if len(f) != 3 && len(f) != 4 {
			return c, fmt.Errorf("counter: want \"counter <name|*> <state> [group]\", got %d words", len(f))
		}
	} else if n, ok := want[c.Verb]; !ok {
		return c, fmt.Errorf("unknown command %q (want fail, latency, counter, reset, clear or status)", c.Verb)
	} else if len(f) != n {
		return c, fmt.Errorf("%s: want %d words, got %d", c.Verb, n, len(f))
	}
	var err error
	switch c.Verb {
	case "fail":
		if c.Op, err = parseOp(f[1]); err != nil {
			return c, err
		}
		if c.Count, err = strconv.Atoi(f[2]); err != nil || c.Count < 1 || c.Count > 1<<20 {
			return c, fmt.Errorf("fail: count %q: want a number from 1 to %d", f[2], 1<<20)
		}
		if c.Errno, err = parseErrno(f[3]); err != nil {
			return c, err
		}
	case "latency":
		if c.Op, err = parseOp(f[1]); err != nil {
			return c, err
		}
		if c.Delay, err = time.ParseDuration(f[2]); err != nil || c.Delay < 0 || c.Delay > time.Hour {
			return c, fmt.Errorf("latency: duration %q: want something like 50ms, at most 1h", f[2])
		}
	case "counter":
		c.Counter, c.State = f[1], f[2]
		if c.Counter != "*" && !isCounterName(c.Counter) {
			return c, fmt.Errorf("counter: unknown counter %q", c.Counter)
		}
		if c.State != "clear" && !slices.Contains(counterStates, c.State) && !occupancyValue(c.Counter, c.State) {
			return c, fmt.Errorf("counter: state %q: want Unavailable, Error, Unassigned, clear or (llc_occupancy only) a number of bytes", c.State)
		}
		c.Group, c.AllGroup = "*", true
		if len(f) == 4 {
			c.Group, c.AllGroup = strings.Trim(f[3], "/"), false
		}
	}
	return c, nil
}

func parseOp(s string) (Op, error) {
	for _, op := range ops {
		if string(op) == s {
			return op, nil
		}
	}
	return "", fmt.Errorf("unknown operation %q (want mkdir, rmdir, tasks-write, tasks-read, counter-read, assign-write or lookup)", s)
}

func parseErrno(s string) (syscall.Errno, error) {
	// x/sys knows the names of the errnos it knows; a lookup over them is cheap enough for
	// a control command.
	for e := syscall.Errno(1); e < 4096; e++ {
		if unix.ErrnoName(e) == strings.ToUpper(s) {
			return e, nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 4095 {
		return 0, fmt.Errorf("errno %q: want a name like ENOSPC or a number from 1 to 4095", s)
	}
	return syscall.Errno(n), nil
}

// occupancyValue reports whether state is a number of bytes for llc_occupancy to read (a
// gauge a test may set; the other counters only grow, see limbo.go).
func occupancyValue(counter, state string) bool {
	_, err := strconv.ParseUint(state, 10, 64)
	return counter == "llc_occupancy" && err == nil
}

func isCounterName(s string) bool {
	return slices.Contains(l3Features(), s) || isAETEvent(s)
}

// apply carries out a parsed command on the model (all but status).
func (m *model) applyCommand(c Command) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := &m.faults
	switch c.Verb {
	case "fail":
		if f.next == nil {
			f.next = map[Op]pendingFault{}
		}
		f.next[c.Op] = pendingFault{count: c.Count, errno: c.Errno}
	case "latency":
		if f.latency == nil {
			f.latency = map[Op]time.Duration{}
		}
		f.latency[c.Op] = c.Delay
	case "counter":
		if f.counter == nil {
			f.counter = map[counterKey]string{}
		}
		k := counterKey{c.Counter, c.Group}
		if c.State == "clear" {
			delete(f.counter, k)
		} else {
			f.counter[k] = c.State
		}
	case "reset":
		m.resetLocked()
	case "clear":
		*f = faults{}
	}
}

// delay sleeps for the latency injected into op, outside the model's lock so that a slow
// operation does not stall the others.
func (m *model) delay(op Op) {
	m.mu.Lock()
	d := m.faults.latency[op]
	m.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
}
