package resctrlsim

import (
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func itoa(n int) string { return strconv.Itoa(n) }

const sampleStat = "1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 100 1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0"

func TestParseStat(t *testing.T) {
	t.Parallel()
	st, err := parseStat([]byte(sampleStat), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if st.CPUTime != 3*time.Second || st.CPU != 1 {
		t.Errorf("got %+v, want 3s on CPU 1", st)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1 2", strings.Replace(sampleStat, " 250 ", " x ", 1), strings.Replace(sampleStat, " 17 1 ", " 17 -1 ", 1)} {
		if _, err := parseStat([]byte(bad), 10*time.Millisecond); err == nil {
			t.Errorf("parseStat(%q) accepted it", bad)
		}
	}
}

func TestParseStatusTgid(t *testing.T) {
	t.Parallel()
	got, err := parseStatusTgid([]byte("Name:\tsh\nUmask:\t0022\nTgid:\t42\nPid:\t43\n"))
	if err != nil || got != 42 {
		t.Errorf("got %d, %v", got, err)
	}
	for _, bad := range []string{"", "Tgid:\tx\n", "Tgid:\t0\n", "Pid:\t1\n"} {
		if _, err := parseStatusTgid([]byte(bad)); err == nil {
			t.Errorf("parseStatusTgid(%q) accepted it", bad)
		}
	}
}

func TestCPUFormats(t *testing.T) {
	t.Parallel()
	cpus, err := parseCPUList("0-2,5,7-8")
	if err != nil || !slices.Equal(cpus, []int{0, 1, 2, 5, 7, 8}) {
		t.Fatalf("parseCPUList: %v, %v", cpus, err)
	}
	if got := formatCPUList(cpus); got != "0-2,5,7-8" {
		t.Errorf("formatCPUList = %q", got)
	}
	if got := formatCPUMask(cpus); got != "1a7" {
		t.Errorf("formatCPUMask = %q", got)
	}
	if m, err := parseCPUMask("1a7"); err != nil || !slices.Equal(m, cpus) {
		t.Errorf("parseCPUMask = %v, %v", m, err)
	}
	for _, bad := range []string{"a", "3-1", "-1", "1,,2", "99999"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) accepted it", bad)
		}
	}
}

func TestParseCommand(t *testing.T) {
	t.Parallel()
	good := map[string]Command{
		"fail mkdir 2 ENOSPC":          {Verb: "fail", Op: OpMkdir, Count: 2, Errno: syscall.ENOSPC},
		"fail tasks-write 1 3":         {Verb: "fail", Op: OpTasksWrite, Count: 1, Errno: syscall.ESRCH},
		"latency rmdir 50ms":           {Verb: "latency", Op: OpRmdir, Delay: 50 * time.Millisecond},
		"counter * Error":              {Verb: "counter", Counter: "*", State: "Error", Group: "*", AllGroup: true},
		"counter core_energy clear /x": {Verb: "counter", Counter: "core_energy", State: "clear", Group: "x"},
		// An occupancy a test holds (limbo.go): a number, for llc_occupancy only.
		"counter llc_occupancy 2097152 mon_groups/g": {Verb: "counter", Counter: "llc_occupancy", State: "2097152", Group: "mon_groups/g"},
		"  reset ": {Verb: "reset"},
		"status":   {Verb: "status"},
	}
	for line, want := range good {
		got, err := ParseCommand(line)
		if err != nil || got != want {
			t.Errorf("ParseCommand(%q) = %+v, %v; want %+v", line, got, err, want)
		}
	}
	bad := map[string]string{
		"":                           "empty",
		"explode":                    "unknown command",
		"fail mkdir":                 "want 4 words",
		"fail mkdir 0 ENOSPC":        "count",
		"fail chmod 1 ENOSPC":        "unknown operation",
		"fail mkdir 1 ENOTANERR":     "errno",
		"latency mkdir forever":      "duration",
		"latency mkdir -1s":          "duration",
		"counter bogus Error":        "unknown counter",
		"counter llc_occupancy -7":   "state",
		"counter llc_occupancy 0x10": "state",
		"counter mbm_total_bytes 7":  "state",
		"counter * 7":                "state",
		"reset now":                  "want 1 words",
	}
	for line, want := range bad {
		if _, err := ParseCommand(line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCommand(%q) = %v, want an error about %q", line, err, want)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte(sampleStat))
	f.Add([]byte("1 () R"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStat(b, 10*time.Millisecond)
		if err == nil && (st.CPUTime < 0 || st.CPU < 0) {
			t.Errorf("accepted %q as %+v", b, st)
		}
	})
}

func FuzzParseStatusTgid(f *testing.F) {
	f.Add([]byte("Tgid:\t42\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, err := parseStatusTgid(b); err == nil && n <= 0 {
			t.Errorf("accepted %q as %d", b, n)
		}
	})
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"fail mkdir 2 ENOSPC", "latency rmdir 5ms", "counter * Error x", "status"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCommand(s)
		if err == nil && c.Verb == "fail" && (c.Count < 1 || c.Errno == 0) {
			t.Errorf("accepted %q as %+v", s, c)
		}
	})
}

func FuzzCPUList(f *testing.F) {
	f.Add("0-3,5")
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := parseCPUList(s)
		if err != nil {
			return
		}
		again, err := parseCPUList(formatCPUList(cpus))
		if err != nil || !slices.Equal(again, cpus) {
			t.Errorf("%q: list %v does not survive formatting: %v, %v", s, cpus, again, err)
		}
	})
}

// FuzzTasksWrite feeds arbitrary bytes to a tasks write: never a panic, and a failure is
// always one of the kernel's errnos for bad input.
func FuzzTasksWrite(f *testing.F) {
	for _, s := range []string{"100", "0x64", "100,101", "-1", "", "\n", "99999999999"} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, lists bool) {
		h := newFakeHost()
		h.threads[100], h.threads[101] = 100, 100
		o := Options{TaskLists: lists}.withDefaults()
		m := newModel(o, h)
		g := m.mustMkdir(t, "g")
		m.lock()
		defer m.unlock()
		switch errno := m.writeTasks(g, data, 100); errno {
		case 0, syscall.EINVAL, syscall.ESRCH:
		default:
			t.Errorf("write %q: unexpected %v", data, errno)
		}
	})
}
