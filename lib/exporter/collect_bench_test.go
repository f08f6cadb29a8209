package exporter

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// BenchmarkCollect: the exporter's own work for 500 pods (2 L3 + 1 PERF_PKG domain each),
// with the inventory in memory: the bookkeeping of last readings and the encoding, without
// any file read. On the simulator every counter read costs far more than on the kernel's
// resctrl (it charges CPU time to groups on each read), so BenchmarkScrape's ratio hides
// this part; this is it alone, against the same loop building the readings.
func BenchmarkCollect(b *testing.B) {
	const pods = 500
	src := &fake{}
	build := func(round int) {
		src.pods = src.pods[:0]
		for i := range pods {
			p := inventory.Pod{Path: fmt.Sprintf("mon_groups/%d", i), PodUID: fmt.Sprint(i), Namespace: "bench", PodName: fmt.Sprint("pod-", i),
				State: inventory.Active, Created: time.Unix(1, 0)}
			for _, d := range []string{"mon_L3_00", "mon_L3_01"} {
				for _, f := range []string{"llc_occupancy", "mbm_total_bytes", "mbm_local_bytes"} {
					p.Readings = append(p.Readings, resctrlfs.Reading{Domain: d, Name: f, Value: float64(round * 1000)})
				}
			}
			for _, f := range []string{"core_energy", "activity"} {
				p.Readings = append(p.Readings, resctrlfs.Reading{Domain: "mon_PERF_PKG_00", Name: f, Value: float64(round)})
			}
			src.pods = append(src.pods, p)
		}
	}
	c, err := New(src, Options{})
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	round := 0
	var building, scraping time.Duration
	for b.Loop() {
		start := time.Now()
		round++
		build(round)
		mid := time.Now()
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				b.Fatal(err)
			}
		}
		building, scraping = building+mid.Sub(start), scraping+time.Since(mid)
	}
	b.ReportMetric(float64(scraping.Microseconds())/float64(b.N), "collect-µs")
	b.ReportMetric(float64(scraping.Nanoseconds())/float64(b.N*pods), "collect-ns/pod")
	b.ReportMetric(float64(scraping)/float64(building), "collect/build")
}
