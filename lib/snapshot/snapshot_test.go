package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const uid = "0f8b2c1e-1111-2222-3333-444455556666"

var (
	t0    = time.Date(2025, 6, 1, 12, 34, 56, 123456789, time.UTC)
	life0 = time.Date(2025, 6, 1, 11, 0, 0, 987654321, time.UTC) // the life sample's snapshots are of
)

func sample(group string, kind Kind) Snapshot {
	return Snapshot{
		Kind:  kind,
		Time:  t0,
		Group: group,
		Life:  life0,
		Path:  "mon_groups/" + group,
		Pod:   &Pod{UID: uid, Namespace: "default", Name: "web"},
		Readings: []Reading{
			{Domain: "mon_L3_00", Name: "llc_occupancy", Value: 1310720, Kind: "gauge", Unit: "By"},
			{Domain: "mon_L3_00", Name: "mbm_total_bytes", Value: 48318382080, Kind: "counter", Unit: "By"},
			{Domain: "mon_PERF_PKG_00", Name: "core_energy", Value: 1843.25, Kind: "counter", Unit: "J"},
		},
		Unavailable: []string{"mon_L3_01/mbm_total_bytes"},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, kind := range []Kind{Begin, End} {
		in := sample(uid, kind)
		cest := time.FixedZone("CEST", 2*3600)
		in.Time = time.Date(2025, 6, 1, 14, 34, 56, 1, cest)
		in.Life = time.Date(2025, 6, 1, 13, 0, 0, 20, cest)
		path, err := Write(dir, in)
		if err != nil {
			t.Fatal(err)
		}
		// The stamp is the life in UTC, fixed width, no ':'.
		if want := filepath.Join(dir, uid+".20250601T110000.000000020Z."+string(kind)); path != want {
			t.Errorf("path %q, want %q", path, want)
		}
		got, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := in
		want.Version = 2
		want.Time, want.Life = in.Time.UTC(), in.Life.UTC()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
		}
		if got.Time.Location() != time.UTC || got.Time.Nanosecond() != 1 {
			t.Errorf("time %v: want UTC with nanoseconds", got.Time)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644", fi.Mode().Perm())
		}
	}
}

// docExample returns the JSON example in doc.go's package comment: the code block under
// "# Example".
func docExample(t testing.TB) []byte {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(src), "// # Example\n")
	if !ok {
		t.Fatal("doc.go has no # Example section")
	}
	var b bytes.Buffer
	for _, line := range strings.Split(after, "\n") {
		code, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			if b.Len() > 0 {
				break
			}
			continue
		}
		b.WriteString(code + "\n")
	}
	return b.Bytes()
}

// The documented example is byte for byte what Write produces for it, so the README cannot
// drift from the code.
func TestDocExampleIsWhatWriteWrites(t *testing.T) {
	t.Parallel()
	example := docExample(t)
	s, err := Read(bytes.NewReader(example))
	if err != nil {
		t.Fatalf("doc example does not parse: %v\n%s", err, example)
	}
	path, err := Write(t.TempDir(), s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, example) {
		t.Errorf("Write output differs from doc.go's example:\n got:\n%s\nwant:\n%s", got, example)
	}
	// Every field of the format appears in the example.
	var m map[string]any
	if err := json.Unmarshal(example, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"version", "kind", "time", "group", "life", "path", "class", "pod", "readings", "unavailable"} {
		if _, ok := m[key]; !ok {
			t.Errorf("doc example lacks %q", key)
		}
	}
	if n := reflect.TypeFor[Snapshot]().NumField(); n != len(m) {
		t.Errorf("doc example has %d fields, Snapshot %d", len(m), n)
	}
	reading := m["readings"].([]any)[0].(map[string]any)
	for _, key := range []string{"domain", "name", "value", "kind", "unit"} {
		if _, ok := reading[key]; !ok {
			t.Errorf("doc example reading lacks %q", key)
		}
	}
}

func TestWriteReadingsNeverNull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := sample(uid, Begin)
	s.Readings, s.Unavailable, s.Pod, s.Class = nil, []string{}, nil, ""
	path, err := Write(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if got := string(m["readings"]); got != "[]" {
		t.Errorf("readings %s, want []", got)
	}
	for _, key := range []string{"pod", "class", "unavailable"} {
		if _, ok := m[key]; ok {
			t.Errorf("empty %q is in the file, want it omitted", key)
		}
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Readings == nil || len(got.Readings) != 0 {
		t.Errorf("readings %#v, want empty non-nil", got.Readings)
	}
}

// Writers racing on one file and readers reading it: every read is one whole snapshot.
func TestWriteAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const writers, readers = 20, 4
	// Sizes differ per writer and the class names the size, so a torn or mixed file cannot
	// pass for a whole one.
	snap := func(w int) Snapshot {
		s := sample(uid, End)
		s.Class = strconv.Itoa(w)
		s.Readings = nil
		for i := range 20 * (w + 1) {
			s.Readings = append(s.Readings, Reading{Domain: "mon_L3_" + strconv.Itoa(i), Name: "mbm_total_bytes", Value: float64(w), Kind: "counter"})
		}
		return s
	}
	path, err := Write(dir, snap(0))
	if err != nil {
		t.Fatal(err)
	}

	var wg, readersWG sync.WaitGroup
	done := make(chan struct{})
	errc := make(chan error, writers+readers)
	for w := range writers {
		wg.Go(func() {
			for range 5 {
				if _, err := Write(dir, snap(w)); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	var reads [readers]int
	for r := range readers {
		readersWG.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				s, err := ReadFile(path)
				if err != nil {
					errc <- err
					return
				}
				w, err := strconv.Atoi(s.Class)
				if err != nil || len(s.Readings) != 20*(w+1) {
					errc <- errors.New("mixed snapshot: class " + s.Class + ", " + strconv.Itoa(len(s.Readings)) + " readings")
					return
				}
				reads[r]++
			}
		})
	}
	wg.Wait()
	close(done)
	readersWG.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	t.Logf("reads per reader: %v", reads)

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := FileName(uid, life0, End); len(entries) != 1 || entries[0].Name() != want {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("dir holds %q, want only %s (no temp files)", names, want)
	}
}

func TestWriteBadNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, want := range map[string]string{
		"":                       "empty",
		".":                      "special",
		"..":                     "special",
		"a/b":                    "'/'",
		"../etc":                 "'.'",
		"a\x00b":                 "NUL",
		".hidden":                "'.'",
		strings.Repeat("x", 201): "201 bytes",
		"\xff\xfe":               "UTF-8",
	} {
		_, err := Write(dir, sample(name, End))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "group name") {
			t.Errorf("group %q: error %v, want one about the group name containing %q", name, err, want)
		}
	}
	if _, err := Write(dir, sample(strings.Repeat("z", maxGroupLen), End)); err != nil {
		t.Errorf("longest valid group: %v", err)
	}
	for _, name := range []string{uid, "ctr-" + strings.Repeat("a", 64), strings.Repeat("b", 64), "a..b", "x."} {
		if _, err := Write(dir, sample(name, Begin)); err != nil {
			t.Errorf("group %q: %v", name, err)
		}
	}
	// Nothing but the valid ones was created, and no temp files.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 6 {
		t.Errorf("%d files, want 6", len(entries))
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temp file %s left", e.Name())
		}
	}
}

func TestWriteRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		edit func(*Snapshot)
		want string
	}{
		"kind":           {func(s *Snapshot) { s.Kind = "middle" }, "kind"},
		"empty kind":     {func(s *Snapshot) { s.Kind = "" }, "kind"},
		"version 1":      {func(s *Snapshot) { s.Version = 1 }, "only version 2 is written"},
		"version 3":      {func(s *Snapshot) { s.Version = 3 }, "version 3"},
		"zero time":      {func(s *Snapshot) { s.Time = time.Time{} }, "time"},
		"zero life":      {func(s *Snapshot) { s.Life = time.Time{} }, "life missing"},
		"life year 0":    {func(s *Snapshot) { s.Life = time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC) }, "life"},
		"life far":       {func(s *Snapshot) { s.Life = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "life"},
		"NaN":            {func(s *Snapshot) { s.Readings[0].Value = math.NaN() }, "Unavailable"},
		"Inf":            {func(s *Snapshot) { s.Readings[1].Value = math.Inf(1) }, "Unavailable"},
		"reading kind":   {func(s *Snapshot) { s.Readings[0].Kind = "" }, "gauge"},
		"no domain":      {func(s *Snapshot) { s.Readings[0].Domain = "" }, "domain"},
		"slash in name":  {func(s *Snapshot) { s.Readings[0].Name = "a/b" }, "name"},
		"pod uid":        {func(s *Snapshot) { s.Pod.UID = "" }, "uid"},
		"unavailable":    {func(s *Snapshot) { s.Unavailable = []string{"mbm_total_bytes"} }, "domain/name"},
		"unavailable /x": {func(s *Snapshot) { s.Unavailable = []string{"/x"} }, "domain/name"},
	} {
		s := sample(uid, End)
		tc.edit(&s)
		_, err := Write(dir, s)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("%d files written for refused snapshots", len(entries))
	}
}

func TestWriteUnwritableDir(t *testing.T) {
	t.Parallel()
	// Tests run as root, which ignores permission bits: a path below a regular file is the
	// one thing MkdirAll cannot create.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(file, "sub"), file} {
		_, err := Write(dir, sample(uid, End))
		if err == nil {
			t.Fatalf("Write into %s: no error", dir)
		}
		if want := filepath.Join(dir, FileName(uid, life0, End)); !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
		if !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("error %q: want the cause wrapped", err)
		}
	}
}

// The snapshot reference page shows doc.go's example, which Write writes (above): the
// operators' page cannot drift from the format either.
func TestReferencePageShowsDocExample(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../../docs/reference/snapshots.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(page), "```json\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/reference/snapshots.md has no json block")
	}
	if want := docExample(t); block != string(want) {
		t.Errorf("docs/reference/snapshots.md's example differs from doc.go's:\n got:\n%s\nwant:\n%s", block, want)
	}
}
