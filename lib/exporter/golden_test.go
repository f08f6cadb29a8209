package exporter_test

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/test/resctrltree"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from this scrape")

// volatile are the families a golden scrape leaves out: the Go runtime's and the process's
// (the host's and the moment's), the scrape's duration, and the build's info (its labels are
// the toolchain and the commit).
var volatile = []string{"go_", "process_", exporter.Prefix + "scrape_duration_seconds", exporter.Prefix + "build_info"}

// TestGolden: the whole of /metrics (what Registry serves, less volatile) over each fixture
// tree, its registry state and its pods' pressure, is testdata/<tree>.golden: a metric whose
// name, help, type, labels or value changes fails it. It is the second scrape, after every
// counter file grew, so cumulative series show what they counted, not only their baseline.
// go test -run TestGolden -update writes the files again; review their diff.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tree := range resctrltree.Names {
		t.Run(tree, func(t *testing.T) {
			t.Parallel()
			got := goldenScrape(t, tree, nil)
			path := filepath.Join("testdata", tree+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestGolden -update writes it)", err)
			}
			if d := lineDiff(string(want), string(got)); d != "" {
				t.Errorf("the scrape of %s is not %s (go test -run TestGolden -update rewrites it):\n%s", tree, path, d)
			}
		})
	}
}

// goldenScrape scrapes a copy of the tree twice, every counter file grown between the two
// (and then changed by change, if not nil), and returns the second scrape's text exposition
// less volatile.
func goldenScrape(t *testing.T, tree string, change func(root string)) []byte {
	t.Helper()
	cfg := resctrltree.Config(t, tree)
	cfg.ResctrlRoot = copyTree(t, cfg.ResctrlRoot)
	cfg.SnapshotDir = snapshots(t)
	// The copy is a plain directory, and this test's: the mount check takes it, nothing else.
	mount := func(root string) error {
		if root != cfg.ResctrlRoot {
			return fmt.Errorf("%s: %w", root, resctrlfs.ErrNotResctrl)
		}
		return nil
	}
	inv, err := inventory.Open(cfg, mount)
	if err != nil {
		t.Fatal(err)
	}
	proc := resctrltree.Proc(t)
	col, err := exporter.New(inv, exporter.Options{SnapshotDir: cfg.SnapshotDir, PSI: &proc, PSIAverages: true})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := exporter.Registry(col)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("first scrape: %v", err)
	}
	grow(t, cfg.ResctrlRoot)
	if change != nil {
		change(cfg.ResctrlRoot)
	}
	return expose(t, reg)
}

// The golden comparison sees one series change, and only that: the scrape is the same from
// run to run, and a counter that grew by one byte more is one line of difference.
func TestGoldenSeesChange(t *testing.T) {
	t.Parallel()
	before := goldenScrape(t, resctrltree.L3, nil)
	if d := lineDiff(string(before), string(goldenScrape(t, resctrltree.L3, nil))); d != "" {
		t.Fatalf("two scrapes of one tree differ:\n%s", d)
	}
	after := goldenScrape(t, resctrltree.L3, func(root string) {
		f := filepath.Join(root, "mon_groups", resctrltree.UIDActive, "mon_data", "mon_L3_00", resctrlfs.MBMTotal)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(strconv.Itoa(n+1)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	d := strings.Split(lineDiff(string(before), string(after)), "\n")
	series := `resctrl_mon_mbm_total_bytes_total{class="",domain="0",group="mon_groups/` + resctrltree.UIDActive
	if len(d) != 2 || !strings.HasPrefix(d[0], "- "+series) || !strings.HasPrefix(d[1], "+ "+series) {
		t.Errorf("one counter grew by one more byte; the difference:\n%s", strings.Join(d, "\n"))
	}
}

// expose is the registry's scrape in the text format, less volatile.
func expose(t *testing.T, reg prometheus.Gatherer) []byte {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if slices.ContainsFunc(volatile, func(p string) bool { return strings.HasPrefix(mf.GetName(), p) }) {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// copyTree copies the fixture tree at src into a directory of the test's, following its
// links (to resctrlfake's trees), so that the test may change it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		fi, err := os.Stat(path) // through a link
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if err := os.MkdirAll(filepath.Join(dst, rel), 0o755); err != nil {
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return copyLinked(path, filepath.Join(dst, rel))
			}
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// copyLinked copies the directory a link points to (WalkDir does not enter links).
func copyLinked(src, dst string) error {
	return os.CopyFS(dst, os.DirFS(src))
}

// grow adds to every cumulative counter file of every group that holds a number: as much
// as its value's digits, so each series grows by its own amount.
func grow(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(path, "/mon_data/") {
			return err
		}
		if cum, _ := resctrlfs.CounterMeta(d.Name()); !cum {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s := strings.TrimSpace(string(b))
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil // the kernel's word for no sample stays
		}
		v += float64(1000 * len(s))
		text := strconv.FormatFloat(v, 'f', -1, 64)
		if strings.Contains(s, ".") { // AET's decimals, as the kernel prints them
			text = strconv.FormatFloat(v, 'f', 6, 64)
		}
		return os.WriteFile(path, []byte(text+"\n"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// snapshots is a snapshot directory with the active pod's .begin and the idle one's
// .begin and .end.
func snapshots(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{
		snapshot.FileName(resctrltree.UIDActive, resctrltree.Created, snapshot.Begin),
		snapshot.FileName(resctrltree.UIDIdle, resctrltree.Created, snapshot.Begin),
		snapshot.FileName(resctrltree.UIDIdle, resctrltree.Created, snapshot.End),
	} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// lineDiff lists the lines only in want (-) and only in got (+); "" when the two are equal.
func lineDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	if len(out) == 0 {
		out = append(out, "(the same lines in another order)")
	}
	return strings.Join(out, "\n")
}
