package exporter

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// BuildInfo is resctrl_mon_build_info, always 1, labelled with the build's version (make's
// VERSION), the commit it was built from (Go's own VCS stamp) and the Go toolchain: a fleet
// sees which build each node runs, and a rollout's progress, in one query.
func BuildInfo() prometheus.Collector {
	revision := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        Prefix + "build_info",
		Help:        "1, labelled with the version, commit (revision) and Go toolchain (goversion) of this build.",
		ConstLabels: prometheus.Labels{"version": config.Version, "revision": revision, "goversion": runtime.Version()},
	}, func() float64 { return 1 })
}

// Registry is a registry of the collectors given, the build's info and the Go and process
// metrics: what a process of ours serves beside what it exports.
func Registry(cs ...prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(BuildInfo(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg, registerAll(reg, cs)
}

func registerAll(reg *prometheus.Registry, cs []prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register metrics: %w", err)
		}
	}
	return nil
}
