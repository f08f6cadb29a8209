package k8s

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A release as an operator's cluster gets it: the image and the chart in a registry, the
// chart installed from there by its OCI reference and the image pulled by the node's runtime.

// chartVersion is the chart version a test image tag is published under (semver: a
// pre-release of the chart's own version).
func chartVersion(tag string) string { return "0.0.0-" + tag }

// chartRef is the OCI reference helm installs the chart from.
func chartRef(registry string) string { return "oci://" + registry + "/charts/resctrl-mon" }

// imageRepository is where the node pulls the image from.
func imageRepository(registry string) string { return registry + "/resctrl-mon" }

// publish pushes the image archive under tag, and this tree's chart packaged with appVersion
// tag (so its default image is that tag) as chartVersion(tag), into the plain-HTTP registry on
// loopback: what `make push` does with a release.
func publish(t *testing.T, registry, archive, tag string) {
	t.Helper()
	publishChart(t, registry, chartDir(t), archive, tag, chartVersion(tag))
}

// publishChart is publish of any chart directory (another release's tree too) as chart
// version version.
func publishChart(t *testing.T, registry, chart, archive, tag, version string) {
	t.Helper()
	dest := fmt.Sprintf("docker://%s:%s", imageRepository(registry), tag)
	if out, err := exec.Command("skopeo", "copy", "--quiet", "--dest-tls-verify=false", "oci-archive:"+archive, dest).CombinedOutput(); err != nil {
		t.Fatalf("skopeo copy %s %s: %v\n%s", archive, dest, err, out)
	}
	dir := t.TempDir()
	if out, err := helm(t, "package", chart, "--version", version, "--app-version", tag, "--destination", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	pkg := filepath.Join(dir, "resctrl-mon-"+version+".tgz")
	if out, err := helm(t, "push", pkg, "oci://"+registry+"/charts", "--plain-http"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("published %s and chart %s %s", strings.TrimPrefix(dest, "docker://"), chartRef(registry), version)
}
