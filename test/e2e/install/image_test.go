package install_test

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// imageArchive is what `make image` writes.
const imageArchive = "../../../bin/resctrl-mon-image.oci.tar"

// ociDescriptor, ociIndex, ociManifest and ociConfig are the parts of the OCI image spec the
// test reads.
type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
}

type ociIndex struct {
	Manifests []ociDescriptor `json:"manifests"`
}

type ociManifest struct {
	Config ociDescriptor   `json:"config"`
	Layers []ociDescriptor `json:"layers"`
}

type ociConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		Entrypoint, Cmd, Env []string
		Labels               map[string]string
	} `json:"config"`
}

// imageFile is a regular file of the image's root filesystem.
type imageFile struct {
	mode int64
	data []byte
}

// readImage reads an OCI archive: its one image's name, config, and the regular files of
// its layers (a later layer's file replaces an earlier one's).
func readImage(t *testing.T, archive string) (string, ociConfig, map[string]imageFile) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			entries[strings.TrimPrefix(h.Name, "./")] = b
		}
	}
	blob := func(d ociDescriptor) []byte {
		b, ok := entries["blobs/"+strings.Replace(d.Digest, ":", "/", 1)]
		if !ok {
			t.Fatalf("%s: no blob %s", archive, d.Digest)
		}
		return b
	}
	var idx ociIndex
	if err := json.Unmarshal(entries["index.json"], &idx); err != nil || len(idx.Manifests) != 1 {
		t.Fatalf("%s: index.json %s: %v, want one manifest", archive, entries["index.json"], err)
	}
	name := idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"]
	var m ociManifest
	if err := json.Unmarshal(blob(idx.Manifests[0]), &m); err != nil {
		t.Fatal(err)
	}
	var cfg ociConfig
	if err := json.Unmarshal(blob(m.Config), &cfg); err != nil {
		t.Fatal(err)
	}
	files := map[string]imageFile{}
	for _, l := range m.Layers {
		var r io.Reader = strings.NewReader(string(blob(l)))
		if strings.HasSuffix(l.MediaType, "+gzip") {
			if r, err = gzip.NewReader(r); err != nil {
				t.Fatal(err)
			}
		}
		lr := tar.NewReader(r)
		for {
			h, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("layer %s: %v", l.Digest, err)
			}
			if h.Typeflag == tar.TypeReg {
				b, err := io.ReadAll(lr)
				if err != nil {
					t.Fatal(err)
				}
				files["/"+strings.TrimPrefix(h.Name, "./")] = imageFile{mode: h.Mode, data: b}
			}
		}
	}
	return name, cfg, files
}

// TestImage: `make image VERSION=…` writes an OCI archive of one image, named and labelled
// with that version and this checkout's revision, FROM scratch: the four binaries (static,
// executable), the default config, passwd/group and /licenses, nothing else (no shell). Real containerd
// imports it (ctr images import) and runs its CLI through CRI, as kubelet would; podman loads
// it into a store of its own (as CRI-O's is loaded) and runs its entrypoint.
func TestImage(t *testing.T) {
	version := fmt.Sprintf("e2e-%d", time.Now().Unix())
	mustMake(t, "image", "VERSION="+version)
	name, cfg, files := readImage(t, imageArchive)
	if want := "localhost/resctrl-mon:" + version; name != want {
		t.Errorf("image name %q, want %q", name, want)
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": strings.TrimSpace(string(rev)),
		"org.opencontainers.image.title":    "resctrl-mon",
		"org.opencontainers.image.source":   "https://github.com/resctrl-mon/resctrl-mon",
	} {
		if got := cfg.Config.Labels[k]; got != want {
			t.Errorf("label %s=%q, want %q", k, got, want)
		}
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/usr/local/bin/resctrl-mon"}) || cfg.OS != "linux" {
		t.Errorf("entrypoint %q on %s, want the CLI on linux", cfg.Config.Entrypoint, cfg.OS)
	}
	want := []string{"/etc/group", "/etc/passwd", "/etc/resctrl-mon/config.yaml"}
	for _, b := range shipped {
		want = append(want, "/usr/local/bin/"+b)
	}
	slices.Sort(want)
	// /licenses is the license tree of `make licenses` (test/release checks it against the
	// modules the binaries link): here, that it is there with the repository's LICENSE on top.
	if lic, err := os.ReadFile("../../../LICENSE"); err != nil || string(files["/licenses/LICENSE"].data) != string(lic) {
		t.Errorf("the image's /licenses/LICENSE is not the repository's LICENSE (%v)", err)
	}
	for name := range files {
		if strings.HasPrefix(name, "/licenses/") {
			delete(files, name)
		}
	}
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
		t.Errorf("the image holds\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	dir := t.TempDir()
	for _, b := range shipped {
		f := files["/usr/local/bin/"+b]
		built, err := os.ReadFile(filepath.Join("../../../bin", b))
		if err != nil {
			t.Fatal(err)
		}
		if f.mode&0o111 == 0 || string(f.data) != string(built) {
			t.Errorf("%s: mode %o, same as bin/%s: %v", b, f.mode, b, string(f.data) == string(built))
		}
		p := filepath.Join(dir, b)
		if err := os.WriteFile(p, f.data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := e2e.CheckStatic(p); err != nil {
			t.Errorf("in the image: %v", err)
		}
	}
	if conf, _ := os.ReadFile("../../../install/config.yaml"); string(files["/etc/resctrl-mon/config.yaml"].data) != string(conf) {
		t.Errorf("the image's config is not install/config.yaml")
	}

	t.Run("containerd", func(t *testing.T) {
		c := e2e.StartContainerd(t, e2e.ContainerdOptions{})
		if _, err := c.Ctr("images", "import", imageArchive); err != nil {
			t.Fatal(err)
		}
		// The image's name is what a pod spec names (imagePullPolicy: Never).
		// (CRI learns of an import a moment after ctr returns.)
		if err := poll.Until(10*time.Second, func() error { _, err := c.Command("inspecti", name); return err }); err != nil {
			t.Fatalf("CRI does not see %s: %v", name, err)
		}
		p, err := c.RunPod(e2e.PodSpec{Name: "image", Namespace: "e2e", UID: "6a1f3c2e-0000-4000-8000-0000000000e1", Kubelet: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.RunContainer(p, name, e2e.ContainerSpec{Name: "cli", Command: []string{"/usr/local/bin/resctrl-mon", "--version"}}); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitLog(p, "cli", "resctrl-mon version "+version, 30*time.Second); err != nil {
			t.Error(err)
		}
	})

	t.Run("podman", func(t *testing.T) {
		pm := e2e.Podman(t)
		if out, err := pm.Command("load", "-i", imageArchive); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// With no command: the entrypoint with the image's CMD (--help).
		out, err := pm.Command("run", "--rm", "--network", "none", name)
		if err != nil || !strings.Contains(string(out), "resctrl-mon - per-pod resctrl monitoring groups") {
			t.Errorf("podman run %s: %v\n%s", name, err, out)
		}
		out, err = pm.Command("run", "--rm", "--network", "none", name, "--version")
		if err != nil || strings.TrimSpace(string(out)) != "resctrl-mon version "+version {
			t.Errorf("podman run %s --version: %v\n%s", name, err, out)
		}
	})
}
