package resctrlfs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// MonReader lists mon_data once and reads the files of that layout in every group until
// LayoutTTL: a domain added meanwhile shows only after it (which proves the listing was not
// done again), a domain gone shows at once, and a group gone is os.ErrNotExist, as from
// a fresh listing. The groups are plain directories: what is tested is the cache, not resctrl
// (TestMonReaderMatchesListing reads the simulator).
func TestMonReaderLayout(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	counter := func(group, domain, name, value string) {
		dir := filepath.Join(root, group, "mon_data", domain)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(value+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []string{"g1", "g2"} {
		counter(g, "mon_L3_00", LLCOccupancy, "4096")
		counter(g, "mon_L3_00", MBMTotal, "100")
	}
	now := time.Unix(1000, 0)
	r := &MonReader{now: func() time.Time { return now }}
	domains := func(group string) []string {
		t.Helper()
		readings, missing, err := r.Read(filepath.Join(root, group))
		if err != nil || len(missing) != 0 {
			t.Fatalf("%s: %v missing, %v", group, missing, err)
		}
		var out []string
		for _, rd := range readings {
			out = append(out, rd.Domain+"/"+rd.Name)
		}
		return out
	}
	want := []string{"mon_L3_00/" + LLCOccupancy, "mon_L3_00/" + MBMTotal}
	if got := domains("g1"); !slices.Equal(got, want) {
		t.Fatalf("g1 read %v, want %v", got, want)
	}
	for _, g := range []string{"g1", "g2"} {
		counter(g, "mon_L3_01", MBMTotal, "7")
	}
	if got := domains("g2"); !slices.Equal(got, want) {
		t.Errorf("within the TTL g2 read %v: the layout was listed again, want the cached %v", got, want)
	}
	now = now.Add(LayoutTTL + time.Second)
	want = append(want, "mon_L3_01/"+MBMTotal)
	if got := domains("g2"); !slices.Equal(got, want) {
		t.Errorf("past the TTL g2 read %v, want the new domain too: %v", got, want)
	}
	for _, g := range []string{"g1", "g2"} {
		if err := os.RemoveAll(filepath.Join(root, g, "mon_data", "mon_L3_00")); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := domains("g1"), []string{"mon_L3_01/" + MBMTotal}; !slices.Equal(got, want) {
		t.Errorf("a domain gone: g1 read %v, want %v at once", got, want)
	}
	if err := os.RemoveAll(filepath.Join(root, "g2")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Read(filepath.Join(root, "g2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a group gone: %v, want os.ErrNotExist", err)
	}
}
