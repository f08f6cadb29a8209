package k8s

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/registrytest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
	"github.com/resctrl-mon/resctrl-mon/test/tlstest"
)

const (
	// prometheusImage is Prometheus and the Operator's config reloader (both from the test
	// cache) on busybox: the Operator's probes of a listenLocal Prometheus run sh and curl
	// or wget.
	prometheusImage = "localhost/prometheus:k8s"
	// The Operator's own metrics, on loopback, off its default :8080 (which the config
	// reloader of the host-network Prometheus takes).
	operatorListen = "127.0.0.1:19581"
	// The managed Prometheus' web port: listenLocal binds it to the node's loopback.
	operatorPrometheusURL = "http://127.0.0.1:9090"
	// fleetLabel selects the chart's PodMonitor and PrometheusRule for the managed Prometheus.
	fleetLabel = "fleet"
)

// The chart's PodMonitor and PrometheusRule through a real Prometheus Operator and the
// Prometheus it manages (the test cache's Prometheus 3, a StatefulSet the Operator makes on
// the node): the PodMonitor, selected by its labels, is scraped over TLS with basic auth
// from values, the workload's namespace and pod are on the series (honorLabels), the
// relabelings and metricRelabelings from values are applied; the PrometheusRule, selected
// by its labels, is loaded, and ResctrlMonRMIDsRunningOut is seen firing while the node's
// RMIDs are out and resolved once pods are gone. containerd with NRI, the chart in mode nri.
func TestKubernetesPrometheusOperator(t *testing.T) {
	buildImages(t)
	opBin := cached(t, "prometheus-operator")
	promBin := cached(t, "prometheus")
	img := buildPrometheusImage(t, promBin, opBin)
	reg := registrytest.Start(t)
	publish(t, reg.Addr, images.test1, "test1")
	// Few RMIDs: a handful of pods use them all.
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 8})
	c := StartCluster(t, "containerd", ClusterOptions{Forker: images.forker, Registry: reg.Addr, Images: []string{img}})
	s := &scenario{Cluster: c, mode: "nri", sim: sim, state: filepath.Join(c.Work, "state"), registry: reg.Addr}
	s.hookPath = filepath.Join(c.Work, "host", "libexec", "resctrl-mon-hook")
	s.hooksDir = filepath.Join(c.Work, "o", "hooks.d")
	s.hookConfig = c.WrapperConfig()

	s.startOperator(opBin)
	s.managedPrometheus(promBin)

	// The exporter serves TLS and asks for basic auth; the PodMonitor scrapes with both.
	password := s.scrapeSecrets()
	extra := filepath.Join(c.Work, "values-operator.yaml")
	if err := os.WriteFile(extra, fmt.Appendf(nil, operatorValues, adapterHealthPort, fleetLabel, fleetLabel), 0o644); err != nil {
		t.Fatal(err)
	}
	installed := s.Helm("install", release, chartRef(s.registry), "--version", chartVersion("test1"), "--plain-http",
		"--namespace", namespace, "-f", s.writeValues("test1"), "-f", extra, "--wait", "--timeout", "120s")
	prom := &e2e.Prometheus{URL: operatorPrometheusURL}

	// Both endpoints (the exporter's metrics, the adapter's nri-metrics) up, over https with
	// the credentials: a scrape refused by TLS or basic auth would be up 0.
	job := namespace + "/" + daemonSet
	s.Eventually(120*time.Second, "both endpoints of the PodMonitor up", func() (bool, string) {
		up, err := prom.Query(fmt.Sprintf(`up{job=%q}`, job))
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, u := range up {
			if u.Value == 1 {
				n++
			}
		}
		return n == 2 && len(up) == 2, fmt.Sprint(up)
	})
	s.requireUnauthorisedScrape(password)

	// The workload's namespace and pod on its series, not the exporter pod's (honorLabels);
	// node from the chart's relabeling; the dropped family dropped (metricRelabelings).
	wl, _ := s.startPod("workload")
	s.waitForker(wl, "main")
	s.requirePlaced("workload", wl, wl.UID)
	s.Eventually(60*time.Second, "the workload's series in Prometheus", func() (bool, string) {
		res, err := prom.Query(fmt.Sprintf(`resctrl_mon_pod_info{pod_uid=%q}`, wl.UID))
		if err != nil || len(res) != 1 {
			return false, fmt.Sprint(res, err)
		}
		l := res[0].Labels
		ok := l["namespace"] == "default" && l["pod"] == "workload" && l["node"] == s.Node() &&
			l["exported_namespace"] == "" && l["exported_pod"] == "" && l["job"] == job
		return ok, fmt.Sprint(l)
	})
	if res, err := prom.Query(`resctrl_mon_scrape_duration_seconds`); err != nil || len(res) != 0 {
		t.Errorf("resctrl_mon_scrape_duration_seconds: %v %v, want none (dropped by metricRelabelings)", res, err)
	}

	// The rule, selected by its labels, loaded by the Operator into Prometheus.
	s.Eventually(120*time.Second, "the PrometheusRule's groups loaded", func() (bool, string) {
		g, err := prom.RuleGroups()
		return err == nil && strings.Contains(strings.Join(g, " "), "resctrl-mon.alerts"), fmt.Sprint(g, err)
	})

	// Pods until every RMID is held: the alert fires.
	var pods []string
	for i := 0; ; i++ {
		used, total := s.rmids(prom)
		if total > 0 && used >= total {
			t.Logf("RMIDs %v of %v used after %d more pods", used, total, len(pods))
			break
		}
		if i == 10 {
			t.Fatalf("RMIDs %v of %v used after %d pods", used, total, len(pods))
		}
		name := fmt.Sprintf("fill-%d", i)
		p, _ := s.startPod(name)
		s.waitForker(p, "main")
		pods = append(pods, name)
		// The exporter's gauge follows the groups at the next scrape.
		s.Eventually(60*time.Second, "RMIDs in use counted after pod "+name, func() (bool, string) {
			now, _ := s.rmids(prom)
			return now > used, fmt.Sprintf("%v used, was %v", now, used)
		})
	}
	s.Eventually(90*time.Second, "ResctrlMonRMIDsRunningOut firing", func() (bool, string) {
		st, err := alertState(prom, "ResctrlMonRMIDsRunningOut")
		return st == "firing", fmt.Sprint(st, err)
	})
	t.Logf("ResctrlMonRMIDsRunningOut fired with every RMID in use")

	// The pods gone (their groups go after retention): resolved.
	s.Kubectl(append([]string{"-n", "default", "delete", "pod", "--wait=true", "--timeout=120s"}, pods...)...)
	s.Eventually(120*time.Second, "ResctrlMonRMIDsRunningOut resolved", func() (bool, string) {
		st, err := alertState(prom, "ResctrlMonRMIDsRunningOut")
		return err == nil && st == "", fmt.Sprint(st, err)
	})

	// NOTES: nothing said of selection where the Prometheus selects both; a warning for
	// each that no Prometheus selects (the API server asked at install and upgrade).
	if strings.Contains(installed, "WARNING: no Prometheus") {
		t.Errorf("helm install's NOTES warn, yet the Prometheus selects both:\n%s", installed)
	}
	out := s.Helm("upgrade", release, chartRef(s.registry), "--version", chartVersion("test1"), "--plain-http",
		"--namespace", namespace, "-f", s.writeValues("test1"), "-f", extra, "--dry-run=server",
		"--set", "prometheusRule.additionalLabels."+fleetLabel+"=elsewhere", "--set", "exporter.podMonitor.labels."+fleetLabel+"=elsewhere")
	for _, want := range []string{"Prometheus' podMonitorSelector asks for", "its alerts never fire"} {
		if !strings.Contains(out, want) {
			t.Errorf("NOTES of an upgrade whose labels select no Prometheus: no warning %q:\n%s", want, out)
		}
	}
}

// operatorValues are the chart's values for the Operator test, beside the node's
// (values()): TLS and basic auth on the exporter, the PodMonitor and the PrometheusRule for
// the managed Prometheus. The relabeling points the targets at the node's loopback, where
// the exporter listens here (exporter.host); the alert fires at once (for 0s) rather than
// after 15 minutes.
const operatorValues = `nri:
  health: {port: %d}
exporter:
  webConfig: {secretName: rm-web, tls: true, basicAuth: true}
  podMonitor:
    enabled: true
    interval: 5s
    scrapeTimeout: 4s
    labels: {%s: resctrl-mon-test}
    tlsConfig:
      ca: {secret: {name: rm-scrape, key: ca.crt}}
    basicAuth:
      username: {name: rm-scrape, key: username}
      password: {name: rm-scrape, key: password}
    relabelings:
      - sourceLabels: [__address__]
        regex: '[^:]+:([0-9]+)'
        replacement: '127.0.0.1:$1'
        targetLabel: __address__
    metricRelabelings:
      - sourceLabels: [__name__]
        regex: resctrl_mon_scrape_duration_seconds
        action: drop
prometheusRule:
  enabled: true
  additionalLabels: {%s: resctrl-mon-test}
  rmidsUsedPercent: 99
  for: {ResctrlMonRMIDsRunningOut: 0s}
`

// rmids is what Prometheus holds of the node's RMIDs: in use, and all.
func (s *scenario) rmids(prom *e2e.Prometheus) (used, total float64) {
	one := func(q string) float64 {
		res, err := prom.Query(q)
		if err != nil || len(res) != 1 {
			return -1
		}
		return res[0].Value
	}
	return one(`resctrl_mon_rmids_used`), one(`resctrl_mon_num_rmids`)
}

// alertState is the state of the named alert (pending, firing), or "" when Prometheus
// holds none.
func alertState(prom *e2e.Prometheus, name string) (string, error) {
	alerts, err := prom.Alerts()
	if err != nil {
		return "", err
	}
	for _, a := range alerts {
		if a.Labels["alertname"] == name {
			return a.State, nil
		}
	}
	return "", nil
}

// buildPrometheusImage makes prometheusImage as an OCI archive for the node's runtime.
func buildPrometheusImage(t *testing.T, promBin, opBin string) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "prometheus.oci.tar")
	script := `set -euo pipefail
w=$1; r=$w/rootfs
mkdir -p "$r"/{bin,dev,etc,proc,sys,tmp,prometheus}
chmod 1777 "$r/tmp"; chmod 0777 "$r/prometheus"
cp /bin/busybox "$r/bin/busybox"
for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
# The Operator's exec probe runs curl if "command -v curl" names an executable, else wget;
# busybox's sh answers an applet's bare name there, which is no path: a curl that is a file.
printf '#!/bin/sh\n# curl --fail URL, as the Operator probes: busybox wget.\nfor a; do u=$a; done\nexec wget -q -O /dev/null "$u"\n' >"$r/bin/curl"
chmod 0755 "$r/bin/curl"
cp "$2/prometheus" "$r/bin/prometheus"
cp "$3/prometheus-config-reloader" "$r/bin/prometheus-config-reloader"
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
tar -C "$r" -cf "$w/rootfs.tar" .
printf '[engine]\nlock_type = "file"\nevents_logger = "none"\n' >"$w/containers.conf"
p=(podman --root "$w/st" --runroot "$w/run" --tmpdir "$w/tmp" --storage-driver vfs --cgroup-manager cgroupfs)
trap 'grep -o " $w[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount 2>/dev/null || true; rm -rf "$w/st" "$w/run" "$w/rootfs"' EXIT
CONTAINERS_CONF=$w/containers.conf "${p[@]}" import --change 'ENTRYPOINT ["/bin/prometheus"]' \
	--change 'USER 65534' "$w/rootfs.tar" "$4" >/dev/null
CONTAINERS_CONF=$w/containers.conf "${p[@]}" save --format oci-archive --output "$5" "$4" >/dev/null
`
	// Short: podman refuses a runroot of more than 50 characters.
	work, err := os.MkdirTemp("", "k8s-pimg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	if b, err := exec.Command("bash", "-c", script, "image", work, promBin, opBin, prometheusImage, out).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", prometheusImage, err, b)
	}
	return out
}

// startOperator runs the Prometheus Operator beside the cluster, as the admin, until the
// test ends (before the cluster goes).
func (s *scenario) startOperator(opBin string) {
	t := s.t
	pki := filepath.Join(s.Work, "cp", "pki")
	crds, err := filepath.Glob(filepath.Join(filepath.Dir(opBin), "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("the Operator's CRDs beside %s: %v %v", opBin, crds, err)
	}
	for _, f := range crds {
		// Server-side: the larger CRDs do not fit the last-applied annotation.
		s.Kubectl("apply", "--server-side", "-f", f)
	}
	s.Kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd/prometheuses.monitoring.coreos.com",
		"crd/podmonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com")
	log, err := os.Create(filepath.Join(s.Work, "operator.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(opBin, "operator"),
		"--apiserver=https://127.0.0.1:6443", "--ca-file="+filepath.Join(pki, "ca.crt"),
		"--cert-file="+filepath.Join(pki, "admin.crt"), "--key-file="+filepath.Join(pki, "admin.key"),
		"--web.listen-address="+operatorListen, "--prometheus-config-reloader="+prometheusImage,
		"--log-level=info")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the Operator: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var err error
		select {
		case err = <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			err = <-exited
		}
		// Stopped by the test's SIGTERM: the only exit that says nothing is a clean one.
		if err != nil {
			t.Logf("the Operator exited: %v", err)
		}
		_ = log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("the Operator's log (tail):\n%s", tail(string(b), 40))
		}
	})
}

// promVersion is the Prometheus release of the test cache's build: Prometheus 3.x tags its
// Go module v0.3xx.y for release v3.xx.y (test/runtimes/prometheus.sh).
var promVersion = regexp.MustCompile(`prometheus-v0\.3(\d\d)\.(\d+)`)

// managedPrometheus makes the Prometheus the Operator runs on the node: host network,
// its web on the node's loopback, its Kubernetes discovery against the test's API server as
// the admin (no kube-proxy here: the service network does not reach host-network pods),
// selecting PodMonitors and PrometheusRules by fleetLabel.
func (s *scenario) managedPrometheus(promBin string) {
	t := s.t
	m := promVersion.FindStringSubmatch(promBin)
	if m == nil {
		t.Fatalf("Prometheus' version from %s: want prometheus-v0.3xx.y", promBin)
	}
	version := fmt.Sprintf("v3.%d.%s", atoi(t, m[1]), m[2])
	pki := filepath.Join(s.Work, "cp", "pki")
	s.Kubectl("create", "namespace", "monitoring")
	s.Kubectl("-n", "monitoring", "create", "secret", "generic", "apiserver",
		"--from-file=ca.crt="+filepath.Join(pki, "ca.crt"), "--from-file=tls.crt="+filepath.Join(pki, "admin.crt"),
		"--from-file=tls.key="+filepath.Join(pki, "admin.key"))
	s.Apply(fmt.Sprintf(`apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: fleet, namespace: monitoring}
spec:
  image: %s
  version: %s
  replicas: 1
  hostNetwork: true
  listenLocal: true
  scrapeInterval: 5s
  evaluationInterval: 5s
  securityContext: {runAsUser: 65534, runAsNonRoot: true, fsGroup: 65534}
  podMonitorSelector: {matchLabels: {%s: resctrl-mon-test}}
  podMonitorNamespaceSelector: {}
  ruleSelector: {matchLabels: {%s: resctrl-mon-test}}
  ruleNamespaceSelector: {}
  # Files of the Secret the Operator mounts (spec.secrets): v0.93 looks the Secret refs of
  # apiserverConfig up in each monitor's namespace, not the Prometheus' own.
  secrets: [apiserver]
  apiserverConfig:
    host: https://127.0.0.1:6443
    tlsConfig:
      caFile: /etc/prometheus/secrets/apiserver/ca.crt
      certFile: /etc/prometheus/secrets/apiserver/tls.crt
      keyFile: /etc/prometheus/secrets/apiserver/tls.key
`, prometheusImage, version, fleetLabel, fleetLabel))
	t.Cleanup(func() {
		if t.Failed() {
			out, err := s.TryKubectl("-n", "monitoring", "logs", "prometheus-fleet-0", "-c", "prometheus", "--tail=30")
			t.Logf("the managed Prometheus' log (tail): %v\n%s", err, out)
		}
	})
	s.Eventually(180*time.Second, "the managed Prometheus ready", func() (bool, string) {
		out, err := s.TryKubectl("-n", "monitoring", "get", "pods", "-o",
			`jsonpath={range .items[*]}{.metadata.name} {.status.containerStatuses[*].ready}{"\n"}{end}`)
		return err == nil && strings.Contains(out, "prometheus-fleet-0 true true"), out
	})
}

// scrapeSecrets makes the exporter's web config (TLS with a certificate for the node's
// loopback, basic auth) and what the PodMonitor scrapes with (the CA, the credentials) in
// the chart's namespace; it returns the password.
func (s *scenario) scrapeSecrets() string {
	t := s.t
	dir := t.TempDir()
	certPEM, keyPEM := tlstest.Loopback(t, "resctrl-mon exporter")
	password := "scrape-" + fmt.Sprint(time.Now().UnixNano())
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"tls.crt": certPEM, "tls.key": keyPEM,
		"web-config.yml": fmt.Appendf(nil, "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  prometheus: %s\n", hash),
		"username":       []byte("prometheus"), "password": []byte(password),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.Kubectl("create", "namespace", namespace)
	from := func(names ...string) []string {
		var a []string
		for _, n := range names {
			a = append(a, "--from-file="+n+"="+filepath.Join(dir, n))
		}
		return a
	}
	s.Kubectl(append([]string{"-n", namespace, "create", "secret", "generic", "rm-web"}, from("web-config.yml", "tls.crt", "tls.key")...)...)
	s.Kubectl(append([]string{"-n", namespace, "create", "secret", "generic", "rm-scrape", "--from-file=ca.crt=" + filepath.Join(dir, "tls.crt")}, from("username", "password")...)...)
	return password
}

// requireUnauthorisedScrape: the exporter refuses a scrape without the credentials, so the
// Prometheus that scrapes it (up 1) sent them.
func (s *scenario) requireUnauthorisedScrape(password string) {
	out, err := exec.Command("curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}", fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort)).Output()
	if err != nil || string(out) != "401" {
		s.t.Errorf("a scrape without credentials: %s %v, want 401", out, err)
	}
	out, err = exec.Command("curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}", "-u", "prometheus:"+password, fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort)).Output()
	if err != nil || string(out) != "200" {
		s.t.Errorf("a scrape with the credentials: %s %v, want 200", out, err)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
