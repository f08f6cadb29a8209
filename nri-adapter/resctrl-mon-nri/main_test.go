package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/nri-adapter/nriplugin"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func TestParseArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		wantErr bool
		check   func(invocation) bool
	}{
		{nil, false, func(i invocation) bool { return i.opts.SweepEvery == nriplugin.DefaultSweepEvery && len(i.set) == 0 }},
		{[]string{"--config", "/etc/x.yaml", "--retention", "10m", "--nri-socket", "/run/nri.sock", "--nri-idx", "50"}, false,
			func(i invocation) bool {
				return i.configPath == "/etc/x.yaml" && i.set["retention"] == "10m" && len(i.set) == 1 &&
					i.opts.Socket == "/run/nri.sock" && i.opts.Index == "50"
			}},
		{[]string{"--sweep-every", "1m"}, false, func(i invocation) bool { return i.opts.SweepEvery == time.Minute }},
		{[]string{"--sweep-every", "10ms"}, true, nil},
		{[]string{"--listen", "127.0.0.1:9432", "--pressure-averages"}, false, func(i invocation) bool {
			return i.export.Listen == "127.0.0.1:9432" && i.export.PressureAverages && i.export.WebConfigFile == ""
		}},
		{[]string{"--web.config.file", "/etc/web.yml"}, true, nil}, // without --listen
		{[]string{"--pressure-averages"}, true, nil},
		{[]string{"extra"}, true, nil},
		{[]string{"--no-such-flag"}, true, nil},
	} {
		inv, err := parseArgs(tc.args, io.Discard)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: error %v, want error %v", tc.args, err, tc.wantErr)
			continue
		}
		if err == nil && !tc.check(inv) {
			t.Errorf("%q: %+v", tc.args, inv)
		}
	}
}

// A bad configuration refuses to start with exit code 2, naming the key, before any runtime
// is contacted.
func TestBadConfigExitsTwo(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	if code := run(context.Background(), []string{"--log", "stderr", "--podSelector", "a in (b)"}, &stderr); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "podSelector") {
		t.Errorf("stderr does not name the key: %q", stderr.String())
	}
}

// The exporter's flags are checked before the runtime is contacted: a bad address or web
// configuration refuses to start with exit code 2 and says which flag was wrong.
func TestBadExporterFlagsExitTwo(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	base := []string{"--log", "stderr", "--resctrlRoot", sim.Dir, "--resctrlSimulator=true", "--stateDir", filepath.Join(t.TempDir(), "state"),
		"--nri-socket", filepath.Join(t.TempDir(), "no-runtime.sock")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "no-port"}, "--listen"},
		{[]string{"--listen", "127.0.0.1:0", "--web.config.file", "/nonexistent/web.yml"}, "--web.config.file"},
	} {
		var stderr strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		code := run(ctx, append(slices.Clone(base), tc.args...), &stderr)
		cancel()
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming %s", tc.args, code, stderr.String(), tc.want)
		}
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add("--config\x00/etc/x.yaml")
	f.Add("--retention\x005m\x00--nri-idx\x0010")
	f.Add("--sweep-every\x000s")
	f.Add("-h")
	f.Add("x")
	f.Fuzz(func(t *testing.T, joined string) {
		inv, err := parseArgs(strings.Split(joined, "\x00"), io.Discard)
		if err != nil {
			return
		}
		if inv.opts.SweepEvery < time.Second {
			t.Errorf("accepted --sweep-every %s", inv.opts.SweepEvery)
		}
		if inv.export.Listen == "" && (inv.export.WebConfigFile != "" || inv.export.PressureAverages) {
			t.Errorf("accepted exporter flags without --listen: %+v", inv.export)
		}
		keys := config.Keys()
		for k := range inv.set {
			if !slices.Contains(keys, k) {
				t.Errorf("accepted unknown key %q", k)
			}
		}
	})
}

// --help says what the program is, and a flag's help names its value as the flag package
// shows it: a backticked phrase in a usage string becomes the value's name (it made
// "-listen resctrl-mon serve" of --listen).
func TestHelp(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if _, err := parseArgs([]string{"--help"}, &b); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"usage: resctrl-mon-nri [flags]", "NRI plugin", "-listen host:port\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, b.String())
		}
	}
}

// The adapter runs on one P unless GOMAXPROCS is in its environment, which then decides
// (the Go runtime read it at start). Not parallel: it sets the process's GOMAXPROCS.
func TestOneProc(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	runtime.GOMAXPROCS(2)
	oneProc(func(string) string { return "2" })
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Errorf("with GOMAXPROCS set: %d Ps, want the 2 it says", n)
	}
	oneProc(func(string) string { return "" })
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("with no GOMAXPROCS: %d Ps, want 1", n)
	}
}
