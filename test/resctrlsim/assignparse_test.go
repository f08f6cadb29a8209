package resctrlsim

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
)

func TestParseAssignments(t *testing.T) {
	t.Parallel()
	total0 := assignOp{ev: evTotal, domain: 0, state: "_", hasState: true}
	for _, tc := range []struct {
		in    string
		ops   []string // assignOp.String of each op parsed
		errno syscall.Errno
		msg   string
	}{
		{in: "mbm_total_bytes:0=_", ops: []string{"mbm_total_bytes:0=_"}},
		{in: "mbm_total_bytes:*=e", ops: []string{"mbm_total_bytes:*=e"}},
		{in: "mbm_local_bytes:0=e;1=_", ops: []string{"mbm_local_bytes:0=e", "mbm_local_bytes:1=_"}},
		{in: "mbm_total_bytes:0=_\nmbm_local_bytes:1=e", ops: []string{"mbm_total_bytes:0=_", "mbm_local_bytes:1=e"}},
		// strim() of each item; the event itself is never trimmed.
		{in: "mbm_total_bytes: 0=_ ;\t1=e\t", ops: []string{"mbm_total_bytes:0=_", "mbm_total_bytes:1=e"}},
		{in: " mbm_total_bytes:0=_", errno: syscall.ENOENT, msg: "Invalid event  mbm_total_bytes"},
		{in: "mbm_total_bytes:0 =_", errno: syscall.EINVAL, msg: "Missing domain id"},
		// '*' ends the line: what follows is ignored, and the next line still counts.
		{in: "mbm_total_bytes:*=_;0=e;junk\nmbm_local_bytes:1=_", ops: []string{"mbm_total_bytes:*=_", "mbm_local_bytes:1=_"}},
		{in: "mbm_total_bytes:*junk=e", ops: []string{"mbm_total_bytes:*=e"}},
		// Nothing after the event, or after a ';', is nothing to do.
		{in: "mbm_total_bytes"},
		{in: "mbm_total_bytes:"},
		{in: "mbm_total_bytes:0=_;", ops: []string{"mbm_total_bytes:0=_"}},
		{in: "mbm_total_bytes:;0=_", errno: syscall.EINVAL, msg: "Missing domain id"},
		// kstrtoul: '+' and leading zeros are fine; a sign, hex, blanks or overflow are not.
		{in: "mbm_total_bytes:+1=_", ops: []string{"mbm_total_bytes:1=_"}},
		{in: "mbm_total_bytes:001=_", ops: []string{"mbm_total_bytes:1=_"}},
		{in: "mbm_total_bytes:-1=_", errno: syscall.EINVAL, msg: "Missing domain id"},
		{in: "mbm_total_bytes:0x1=_", errno: syscall.EINVAL, msg: "Missing domain id"},
		{in: "mbm_total_bytes:99999999999999999999=_", errno: syscall.EINVAL, msg: "Missing domain id"},
		{in: "mbm_total_bytes:=_", errno: syscall.EINVAL, msg: "Missing domain id"},
		{in: "mbm_total_bytes:2=_", errno: syscall.EINVAL, msg: "Invalid domain id 2"},
		{in: "mbm_total_bytes:18446744073709551615=_", errno: syscall.EINVAL, msg: "Invalid domain id -1"},
		// The state is checked when applied, not here: these parse.
		{in: "mbm_total_bytes:0=x", ops: []string{"mbm_total_bytes:0=x"}},
		{in: "mbm_total_bytes:0", ops: []string{"mbm_total_bytes:0=(null)"}},
		{in: "mbm_total_bytes:0==e", ops: []string{"mbm_total_bytes:0==e"}},
		// Ops before an error are kept: the kernel has applied them already.
		{in: "mbm_total_bytes:0=_;7=_", ops: []string{"mbm_total_bytes:0=_"}, errno: syscall.EINVAL, msg: "Invalid domain id 7"},
		{in: "mbm_total_bytes:0=_\nllc_occupancy:0=e", ops: []string{"mbm_total_bytes:0=_"}, errno: syscall.ENOENT, msg: "Invalid event llc_occupancy"},
		{in: "", errno: syscall.ENOENT, msg: "Invalid event "},
		{in: "mbm_total_bytes:0=_\n", ops: []string{"mbm_total_bytes:0=_"}, errno: syscall.ENOENT, msg: "Invalid event "},
	} {
		ops, err := parseAssignments(tc.in, 2)
		var got []string
		for _, op := range ops {
			got = append(got, op.String())
		}
		if !slices.Equal(got, tc.ops) {
			t.Errorf("%q: ops %q, want %q", tc.in, got, tc.ops)
		}
		switch {
		case err == nil && tc.errno != 0:
			t.Errorf("%q: accepted, want %v %q", tc.in, tc.errno, tc.msg)
		case err != nil && (err.errno != tc.errno || err.msg != tc.msg):
			t.Errorf("%q: %v %q, want %v %q", tc.in, err.errno, err.msg, tc.errno, tc.msg)
		}
	}
	if got := total0.String(); got != "mbm_total_bytes:0=_" {
		t.Errorf("op prints as %q", got)
	}
}

func TestKstrtobool(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{ // 1 true, 0 false, -1 refused
		"1": 1, "1\n": 1, "10": 1, "y": 1, "Yes": 1, "t": 1, "on": 1, "ON\n": 1,
		"0": 0, "0\n": 0, "n": 0, "F": 0, "off": 0,
		"": -1, "\n": -1, "2": -1, "o": -1, "ox": -1, " 1": -1,
	} {
		v, ok := kstrtobool([]byte(in))
		got := -1
		if ok {
			got = map[bool]int{true: 1, false: 0}[v]
		}
		if got != want {
			t.Errorf("kstrtobool(%q) = %d, want %d", in, got, want)
		}
	}
}

// newAssignModel is a model in mbm_event mode over a fake host: the root holds its counters.
func newAssignModel(t testing.TB, counters, domains int) *model {
	t.Helper()
	o := Options{MBMAssign: MBMAssignEvent, MBMCounters: counters, L3Domains: domains}.withDefaults()
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	return newModel(o, newFakeHost())
}

// checkCounterBooks: every counter is free or held by exactly the group whose state says so.
func checkCounterBooks(t testing.TB, m *model, groups ...*group) {
	t.Helper()
	held := 0
	for _, g := range groups {
		for d, l := range g.counters.l3 {
			for ev, id := range l.cntr {
				if id < 0 {
					continue
				}
				held++
				if s := m.assign.slots[d][id]; s.g != g || s.ev != mbmEvent(ev) {
					t.Fatalf("counter %d of domain %d: held by %v, group %s thinks it has it for %s", id, d, s, g.name, mbmEventNames[ev])
				}
			}
		}
	}
	free := 0
	for d := range m.opts.L3Domains {
		free += m.assign.available(d)
	}
	if free+held != m.opts.L3Domains*m.opts.MBMCounters {
		t.Fatalf("%d free and %d held of %d counters", free, held, m.opts.L3Domains*m.opts.MBMCounters)
	}
}

// FuzzAssignmentsWrite writes arbitrary bytes to a group's mbm_L3_assignments: never a panic,
// only the kernel's errnos, last_cmd_status saying why exactly when the write failed (but
// untouched without the trailing newline), and the counter books always balanced.
func FuzzAssignmentsWrite(f *testing.F) {
	for _, s := range []string{
		"mbm_total_bytes:0=_\n", "mbm_total_bytes:*=e\n", "mbm_local_bytes:0=e;1=_\n",
		"mbm_total_bytes:*=_\nmbm_local_bytes:*=_\n", "mbm_total_bytes:1=x\n", "bogus:0=e\n",
		"mbm_total_bytes:9=e\n", "\n", "", "mbm_total_bytes:0=_",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := newAssignModel(t, 5, 2) // root 2 + a 2 per domain: one spare each
		a, b := m.mustMkdir(t, "a"), m.mustMkdir(t, "b")
		m.lock()
		defer m.unlock()
		m.lastCmd = "before"
		errno := m.writeAssignments(b, data)
		switch errno {
		case 0, syscall.EINVAL, syscall.ENOENT, syscall.ENOSPC:
		default:
			t.Fatalf("write %q: unexpected %v", data, errno)
		}
		newline := len(data) > 0 && data[len(data)-1] == '\n'
		switch {
		case !newline && (errno != syscall.EINVAL || m.lastCmd != "before"):
			t.Errorf("write %q without a newline: %v, last_cmd_status %q", data, errno, m.lastCmd)
		case newline && (errno == 0) != (m.lastCmd == "ok"):
			t.Errorf("write %q: %v with last_cmd_status %q", data, errno, m.lastCmd)
		}
		checkCounterBooks(t, m, m.root, a, b)
		if _, errno := m.renderAssignments(b); errno != 0 {
			t.Errorf("assignments unreadable after %q: %v", data, errno)
		}
	})
}

// A write that assigns more than is free stops at the first domain without a counter,
// keeping what it assigned before it, and says so in the kernel's words.
func TestAssignmentsWritePartial(t *testing.T) {
	t.Parallel()
	m := newAssignModel(t, 3, 2) // root 2 per domain, then a takes mbm_total_bytes on both
	a := m.mustMkdir(t, "a")
	m.lock()
	defer m.unlock()
	if got, want := m.lastCmd, "Failed to allocate counter for mbm_local_bytes in domain 0"; got != want {
		t.Errorf("after mkdir, last_cmd_status %q, want %q", got, want)
	}
	m.unassignCntr(m.root, 1, evLocal)
	errno := m.writeAssignments(a, []byte("mbm_local_bytes:*=e\n"))
	want := "Failed to allocate counter for mbm_local_bytes in domain 0\nAssign operation 'mbm_local_bytes:*=e' failed"
	if errno != syscall.ENOSPC || m.lastCmd != want {
		t.Errorf("got %v %q, want ENOSPC %q", errno, m.lastCmd, want)
	}
	text, _ := m.renderAssignments(a)
	if want := "mbm_total_bytes:0=e;1=e\nmbm_local_bytes:0=_;1=_\n"; text != want {
		t.Errorf("assignments %q, want %q (nothing past the failed domain 0)", text, want)
	}
	checkCounterBooks(t, m, m.root, a)
	if errno := m.writeAssignments(a, []byte("mbm_local_bytes:1=e\n")); errno != 0 {
		t.Errorf("assign the free counter of domain 1: %v (%s)", errno, m.lastCmd)
	}
	checkCounterBooks(t, m, m.root, a)
	if got := fmt.Sprint(m.assign.available(0), m.assign.available(1)); got != "0 0" {
		t.Errorf("available %s, want 0 0", got)
	}
	if got := m.readMBM(a, 1, evLocal); got != "0\n" {
		t.Errorf("a fresh counter reads %q, not from zero", got)
	}
}
