package wrapper

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// BenchmarkPrepare times the wrapper's work before it execs the runtime, per kind of call,
// against reading the config alone (what every call costs, a pass-through included), in
// the same loop; the ratio is what the command's own part adds.
func BenchmarkPrepare(b *testing.B) {
	rt := filepath.Join(b.TempDir(), "runc")
	if err := os.WriteFile(rt, []byte("#!/bin/sh\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("runtime: "+rt+"\nstateDir: "+dir+"/state\nlog: file:"+dir+"/log\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	environ := []string{"RESCTRL_MON_CONFIG=" + cfg}
	bundle := filepath.Join(dir, "b")
	if err := os.Mkdir(bundle, 0o755); err != nil {
		b.Fatal(err)
	}
	spec := filepath.Join(bundle, "config.json")
	const bareSpec = `{"ociVersion":"1.0.2","process":{"args":["sh"]}}`
	if err := os.WriteFile(spec, []byte(bareSpec), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"state", []string{"runc", "--root", "/run/runc", "state", "c1"}},
		{"create-hooks-present", []string{"runc", "create", "--bundle", bundle, "c1"}},
		{"exec-no-group", []string{"runc", "exec", "c1", "true"}},
		{"create-hooks-added", []string{"runc", "create", "--bundle", bundle, "c1"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var cfgT, prepT time.Duration
			n := 0
			for b.Loop() {
				if tc.name == "create-hooks-added" {
					b.StopTimer()
					if err := os.WriteFile(spec, []byte(bareSpec), 0o644); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				t0 := time.Now()
				if _, err := config.Resolve("", environ, nil); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := Prepare(tc.args, environ, os.Getpid(), io.Discard); err != nil {
					b.Fatal(err)
				}
				cfgT, prepT = cfgT+t1.Sub(t0), prepT+time.Since(t1)
				n++
			}
			b.ReportMetric(float64(prepT.Microseconds())/float64(n), "prepare-µs")
			b.ReportMetric(float64(cfgT.Microseconds())/float64(n), "config-µs")
			b.ReportMetric(float64(prepT)/float64(cfgT), "x-config")
		})
	}
}
