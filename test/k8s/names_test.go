package k8s

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// pressureMetric is the pressure series containerNames reads: every container of a pod has
// one wherever the kernel keeps PSI.
const pressureMetric = "resctrl_mon_pressure_cpu_waiting_seconds_total"

// containerNames: the exporter labels the pressure series of the Deployment web's pod by its
// containers' names, container="a" and container="b", as cAdvisor and kubelet do, and each
// with its runtime's id in container_id: the id kubelet shows in the pod's status, 64 hex
// digits on containerd (mode nri: NRI's Container.Name) and CRI-O (mode hooks: the spec's
// io.kubernetes.container.name) alike. The pod's own cgroup has both "". No series is
// labelled by an id alone.
func (s *scenario) containerNames(wl *workloads) {
	t := s.t
	t.Helper()
	// The statuses now: the ids are the running containers'.
	pod, err := s.GetPod(wl.web.Namespace, wl.web.Name)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, c := range pod.Containers {
		ids[c.Name] = c.ID
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	var got []labelSet
	s.Eventually(30*time.Second, fmt.Sprintf("%s (%s): %s of pod %s by container name", s.Runtime, s.mode, pressureMetric, pod.Name), func() (bool, string) {
		fams, err := scrape(url)
		if err != nil {
			return false, err.Error()
		}
		if avail := fams["resctrl_mon_pressure_available"]; avail != nil && len(avail.GetMetric()) == 1 && avail.GetMetric()[0].GetGauge().GetValue() == 0 {
			return false, "resctrl_mon_pressure_available is 0: this node's kernel keeps no PSI, and there is no pressure series to check"
		}
		got = seriesOf(fams[pressureMetric], "pod_uid", pod.UID)
		if why := checkContainerNames(got, ids, []string{"a", "b"}); why != "" {
			return false, why
		}
		return true, ""
	})
	t.Logf("%s (%s): pod %s's pressure series are labelled by name with the runtime's id beside: %v", s.Runtime, s.mode, pod.Name, got)
}

// labelSet is one series' container and container_id.
type labelSet struct{ Container, ID string }

func (l labelSet) String() string {
	return fmt.Sprintf("{container=%q container_id=%q}", l.Container, l.ID)
}

// checkContainerNames says what is wrong with a pod's series ("" when nothing is): one per
// named container, labelled by its name and by the id in ids (64 hex digits); one for the
// pod's own cgroup (both ""); and nothing else.
func checkContainerNames(series []labelSet, ids map[string]string, names []string) string {
	var why []string
	want := []labelSet{{"", ""}}
	for _, n := range names {
		id := ids[n]
		if !isHexID(id) {
			why = append(why, fmt.Sprintf("kubelet shows container %s with id %q, not 64 hex digits", n, id))
		}
		want = append(want, labelSet{n, id})
	}
	for _, w := range want {
		if n := count(series, w); n != 1 {
			why = append(why, fmt.Sprintf("%d series %v, want 1", n, w))
		}
	}
	for _, s := range series {
		if !slices.Contains(want, s) {
			why = append(why, fmt.Sprintf("series %v is none of %v", s, want))
		}
	}
	if len(why) > 0 {
		return strings.Join(why, "; ") + fmt.Sprintf(" (the pod's series: %v)", series)
	}
	return ""
}

func count(series []labelSet, l labelSet) int {
	n := 0
	for _, s := range series {
		if s == l {
			n++
		}
	}
	return n
}

// isHexID reports whether s is a container id as containerd and CRI-O make them.
func isHexID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// seriesOf lists the container and container_id labels of mf's series whose label name has
// value.
func seriesOf(mf *dto.MetricFamily, name, value string) []labelSet {
	var out []labelSet
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels[name] == value {
			out = append(out, labelSet{labels["container"], labels["container_id"]})
		}
	}
	return out
}

// scrape reads the exporter's text exposition.
func scrape(url string) (map[string]*dto.MetricFamily, error) {
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("scrape %s: %s: %s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return fams, nil
}
