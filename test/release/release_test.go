package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/registrytest"
)

// TestRelease: `make release` with a version other than VERSION's writes the tarball, the
// image archive, the chart and SHA256SUMS, each carrying that version and the licenses;
// `make push` puts image and chart in a real registry on loopback, where skopeo and helm
// find them. Needs root (podman builds the image), podman, skopeo, docker-registry and the
// cached helm (make runtimes): missing, the test skips, or fails under RESCTRLSIM_REQUIRE=1.
func TestRelease(t *testing.T) {
	t.Parallel()
	e2e.RequireRoot(t)
	for _, tool := range []string{"podman", "skopeo", "sha256sum", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			e2e.Unavailable(t, "release: %s is not installed (make deps)", tool)
		}
	}
	helm := cachedHelm(t)
	reg := registrytest.Start(t)
	root := repoRoot(t)
	version := readVersion(t) + "-test.1"
	work, err := os.MkdirTemp("", "release-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	dist := filepath.Join(work, "dist")
	// helm keeps its caches and registry config here, not in the home directory.
	env := []string{
		"HELM_CACHE_HOME=" + filepath.Join(work, "helm", "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(work, "helm", "config"),
		"HELM_DATA_HOME=" + filepath.Join(work, "helm", "data"),
	}
	makeArgs := []string{"-s", "--no-print-directory", "VERSION=" + version, "BIN=" + filepath.Join(work, "bin"),
		"DIST=" + dist, "HELM=" + helm}
	runIn(t, root, env, "make", append([]string{"release"}, makeArgs...)...)

	base := "resctrl-mon-" + version
	tarball := base + "-linux-" + runtime.GOARCH + ".tar.gz"
	want := []string{"SHA256SUMS", base + ".oci.tar", base + ".tgz", tarball}
	slices.Sort(want)
	if got := dirNames(t, dist); !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", dist, got, want)
	}
	runIn(t, dist, nil, "sha256sum", "--strict", "-c", "SHA256SUMS")
	if sums, _ := os.ReadFile(filepath.Join(dist, "SHA256SUMS")); strings.Count(string(sums), "\n") != 3 {
		t.Errorf("SHA256SUMS:\n%s\nwant the three artifacts", sums)
	}

	t.Run("tarball", func(t *testing.T) { checkTarball(t, filepath.Join(dist, tarball), version) })
	t.Run("chart", func(t *testing.T) { checkChart(t, filepath.Join(dist, base+".tgz"), version) })
	t.Run("image", func(t *testing.T) { checkImage(t, filepath.Join(dist, base+".oci.tar"), version) })
	if t.Failed() {
		return
	}

	t.Run("push", func(t *testing.T) {
		runIn(t, root, env, "make", append([]string{"push", "REGISTRY=" + reg.Addr}, makeArgs...)...)
		out := runIn(t, "", env, "skopeo", "inspect", "--tls-verify=false", "docker://"+reg.Addr+"/resctrl-mon:"+version)
		var inspect struct {
			Labels map[string]string
		}
		if err := json.Unmarshal(out, &inspect); err != nil {
			t.Fatalf("skopeo inspect: %v\n%s", err, out)
		}
		if got := inspect.Labels["org.opencontainers.image.version"]; got != version {
			t.Errorf("the pushed image's version label %q, want %q", got, version)
		}
		pulled := t.TempDir() // helm pull -d wants a directory that exists
		runIn(t, "", env, helm, "pull", "--plain-http", "oci://"+reg.Addr+"/charts/resctrl-mon", "--version", version, "-d", pulled)
		if a, b := fileSum(t, filepath.Join(pulled, base+".tgz")), fileSum(t, filepath.Join(dist, base+".tgz")); a != b {
			t.Errorf("the chart pulled from the registry is not the one in %s", dist)
		}
		// Under a repository prefix, as a shared registry's projects are.
		runIn(t, root, env, "make", append([]string{"push", "REGISTRY=" + reg.Addr, "REPOSITORY=team/tools"}, makeArgs...)...)
		runIn(t, "", env, "skopeo", "inspect", "--tls-verify=false", "docker://"+reg.Addr+"/team/tools/resctrl-mon:"+version)
		runIn(t, "", env, helm, "pull", "--plain-http", "oci://"+reg.Addr+"/team/tools/charts/resctrl-mon", "--version", version, "-d", t.TempDir())
	})

	t.Run("push refuses", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"REGISTRY="}, "REGISTRY is empty"},
			{[]string{"REGISTRY=http://" + reg.Addr}, "want host[:port] only"},
			{[]string{"REGISTRY=" + reg.Addr, "VERSION=0.0.0-none"}, "make release VERSION=0.0.0-none first"},
			// Pushed above: a version is pushed once, never overwritten.
			{[]string{"REGISTRY=" + reg.Addr}, "resctrl-mon:" + version + " is already in the registry"},
			{[]string{"REGISTRY=" + reg.Addr, "REPOSITORY=team/tools"}, "is already in the registry"},
		} {
			cmd := exec.Command("make", append(append([]string{"push"}, makeArgs...), tc.args...)...)
			cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("make push %q: %v, want a failure saying %q:\n%s", tc.args, err, tc.want, out)
			}
		}
	})
}

// cachedHelm is the helm `make runtimes` builds, or a skip (a failure under
// RESCTRLSIM_REQUIRE=1): a test never starts that build itself.
func cachedHelm(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(repoRoot(t), "test", "runtimes", "helm.sh"), "--print").Output()
	if err != nil {
		e2e.Unavailable(t, "release: helm is not in the test cache: run make runtimes")
	}
	return filepath.Join(strings.TrimSpace(string(out)), "helm")
}

// checkTarball: one top directory holding the four binaries (executable, this version),
// LICENSE, CHANGELOG.md, README.md and licenses/, whose tree covers exactly the modules the
// binaries link.
func checkTarball(t *testing.T, path, version string) {
	files := readTar(t, path, true)
	top := strings.TrimSuffix(filepath.Base(path), ".tar.gz") + "/"
	dir := t.TempDir()
	var names []string
	for name, f := range files {
		if !strings.HasPrefix(name, top) {
			t.Errorf("%s: %s is outside %s", path, name, top)
			continue
		}
		rel := strings.TrimPrefix(name, top)
		if !strings.HasPrefix(rel, "licenses/") {
			names = append(names, rel)
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, os.FileMode(f.mode)&0o777); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"CHANGELOG.md", "LICENSE", "README.md", "kubectl-resctrl_mon"}
	if files[top+"kubectl-resctrl_mon"].mode&0o111 == 0 {
		t.Errorf("%s: the kubectl plugin is not executable", path)
	}
	for b := range shipped {
		want = append(want, b)
		if files[top+b].mode&0o111 == 0 {
			t.Errorf("%s: %s is not executable", path, b)
		}
	}
	slices.Sort(want)
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("%s holds %q besides licenses/, want %q", path, names, want)
	}
	if ours, _ := os.ReadFile(filepath.Join(repoRoot(t), "LICENSE")); !bytes.Equal(files[top+"LICENSE"].data, ours) {
		t.Errorf("%s: LICENSE is not the repository's", path)
	}
	out := runIn(t, "", nil, filepath.Join(dir, "resctrl-mon"), "--version")
	if got := strings.TrimSpace(string(out)); got != "resctrl-mon version "+version {
		t.Errorf("resctrl-mon --version from the tarball: %q, want version %s", got, version)
	}
	if err := e2e.CheckStatic(filepath.Join(dir, "resctrl-mon-hook")); err != nil {
		t.Error(err)
	}
	checkLicenses(t, dir, filepath.Join(dir, "licenses"))
}

// checkChart: the packaged chart's Chart.yaml has the release's version and appVersion.
func checkChart(t *testing.T, path, version string) {
	files := readTar(t, path, true)
	var chart struct {
		Name       string `yaml:"name"`
		Version    string `yaml:"version"`
		AppVersion string `yaml:"appVersion"`
	}
	if err := yaml.Unmarshal(files["resctrl-mon/Chart.yaml"].data, &chart); err != nil {
		t.Fatalf("%s: resctrl-mon/Chart.yaml: %v", path, err)
	}
	if chart.Name != "resctrl-mon" || chart.Version != version || chart.AppVersion != version {
		t.Errorf("%s: Chart.yaml name %q, version %q, appVersion %q; want resctrl-mon, %s, %s",
			path, chart.Name, chart.Version, chart.AppVersion, version, version)
	}
}

// checkImage: the OCI archive's one image is tagged with the version (index.json's ref name,
// the manifest's too where it has one), its config is labelled with it, and its layers hold
// /licenses with our LICENSE and modules.txt.
func checkImage(t *testing.T, path, version string) {
	entries := readTar(t, path, false)
	blob := func(digest string) []byte {
		f, ok := entries["blobs/"+strings.Replace(digest, ":", "/", 1)]
		if !ok {
			t.Fatalf("%s: no blob %s", path, digest)
		}
		return f.data
	}
	type descriptor struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Annotations map[string]string `json:"annotations"`
	}
	var index struct{ Manifests []descriptor }
	if err := json.Unmarshal(entries["index.json"].data, &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("%s: index.json %s: %v, want one manifest", path, entries["index.json"].data, err)
	}
	if ref := index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; !strings.HasSuffix(ref, ":"+version) {
		t.Errorf("%s: the image is named %q, want the tag %s", path, ref, version)
	}
	var manifest struct {
		Config      descriptor
		Layers      []descriptor
		Annotations map[string]string
	}
	if err := json.Unmarshal(blob(index.Manifests[0].Digest), &manifest); err != nil {
		t.Fatal(err)
	}
	if ref, ok := manifest.Annotations["org.opencontainers.image.ref.name"]; ok && !strings.HasSuffix(ref, ":"+version) {
		t.Errorf("%s: the manifest names %q, want the tag %s", path, ref, version)
	}
	var config struct {
		Config struct{ Labels map[string]string }
	}
	if err := json.Unmarshal(blob(manifest.Config.Digest), &config); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.licenses": "Apache-2.0",
	} {
		if got := config.Config.Labels[k]; got != want {
			t.Errorf("%s: label %s=%q, want %q", path, k, got, want)
		}
	}
	files := map[string]tarFile{}
	for _, l := range manifest.Layers {
		layer := filepath.Join(t.TempDir(), "layer.tar")
		if err := os.WriteFile(layer, blob(l.Digest), 0o644); err != nil {
			t.Fatal(err)
		}
		maps.Copy(files, readTar(t, layer, strings.HasSuffix(l.MediaType, "+gzip")))
	}
	ours, _ := os.ReadFile(filepath.Join(repoRoot(t), "LICENSE"))
	if !bytes.Equal(files["licenses/LICENSE"].data, ours) {
		t.Errorf("%s: /licenses/LICENSE is not the repository's LICENSE", path)
	}
	if !bytes.HasPrefix(files["licenses/modules.txt"].data, []byte("std go")) {
		t.Errorf("%s: /licenses/modules.txt: %q", path, files["licenses/modules.txt"].data)
	}
	n := 0
	for name, f := range files {
		if strings.HasPrefix(name, "licenses/") {
			n++
			if f.mode&0o004 == 0 {
				t.Errorf("%s: /%s mode %o, want readable by all", path, name, f.mode)
			}
		}
	}
	if n < 20 {
		t.Errorf("%s: %d files under /licenses, want the licenses of every linked module", path, n)
	}
}

// tarFile is a regular file of a tar archive.
type tarFile struct {
	mode int64
	data []byte
}

// readTar reads the regular files of a tar archive (gzipped or not), by name without "./".
func readTar(t *testing.T, path string, gzipped bool) map[string]tarFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if gzipped {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	files := map[string]tarFile{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("%s: %s: %v", path, h.Name, err)
			}
			files[strings.TrimPrefix(h.Name, "./")] = tarFile{mode: h.Mode, data: b}
		}
	}
}

// dirNames lists a directory's entries, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// fileSum is a file's SHA-256, in hex.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}
