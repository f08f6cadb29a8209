package procfs

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	line := "1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 98765 1000 100 18446744073709551615"
	st, err := ParseStat([]byte(line))
	if err != nil || st.State != 'S' || st.StartTime != 98765 {
		t.Errorf("got %+v, %v", st, err)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1 2", "1 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) accepted it", bad)
		}
	}
}

func TestSelf(t *testing.T) {
	t.Parallel()
	st, err := ReadStat(os.Getpid())
	if err != nil || !SameProcess(os.Getpid(), st.StartTime) || SameProcess(os.Getpid(), st.StartTime+1) {
		t.Errorf("self: %+v, %v", st, err)
	}
	tids, err := Threads(os.Getpid())
	if err != nil || !slices.Contains(tids, os.Getpid()) {
		t.Errorf("threads: %v, %v", tids, err)
	}
	if Finished(os.Getpid()) || !Finished(1<<30) {
		t.Errorf("Finished")
	}
}

// FuzzParseStat: what parses is the line's own fields counted from the last ')' (field 22 is
// the start time a pid's identity rests on), whatever the command name before it holds:
// a process names itself (prctl PR_SET_NAME), so it may put spaces and ')' there.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1 (sh) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0"), "x) R 1 2")
	f.Add([]byte("1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 98765 1000 100 "+
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0"), " ) ")
	f.Add([]byte("1 (x) Z 0 0 0 0 0 0 0 0 0 0 9223372036854775807 9223372036854775807 0 0 0 0 0 0 1"), "")
	f.Fuzz(func(t *testing.T, b []byte, comm string) {
		st, err := ParseStat(b)
		if err != nil {
			return
		}
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		f := strings.Fields(string(rest))
		utime, err1 := strconv.ParseUint(f[11], 10, 64)
		stime, err2 := strconv.ParseUint(f[12], 10, 64)
		start, err3 := strconv.ParseUint(f[19], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil || st.StartTime != start || st.CPUTicks != utime+stime || st.CPUTicks < utime {
			t.Errorf("%q: parsed %+v; fields 14, 15, 22 are %s %s %s (%v)", b, st, f[11], f[12], f[19], err)
		}
		if st.State != f[0][0] || len(f[0]) != 1 || st.Processor < -1 || (st.Processor >= 0) != (len(f) > 36) {
			t.Errorf("%q: parsed %+v", b, st)
		}
		again, err := ParseStat(append([]byte("7 ("+comm+")"), rest...))
		if err != nil || again != st {
			t.Errorf("command name %q changed the parse: %+v, %v; want %+v", comm, again, err, st)
		}
	})
}
