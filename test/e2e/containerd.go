package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// criNamespace is the containerd namespace of everything the CRI plugin makes.
const criNamespace = "k8s.io"

// Containerd is a containerd daemon of a test's own (test/runtimes/containerd.sh builds it,
// with ctr and containerd-shim-runc-v2), with every path private to it: root, state, its
// sockets (gRPC, ttrpc, NRI, the shims'), runc's root, CNI and NRI directories, and its
// log. Its CRI field drives it with crictl; Ctr runs ctr against it.
//
// containerd has no hooks.d: what a hook would be told is read from each container's bundle
// (BundleSpec). NRI is enabled on NRISocket for plugins to connect to.
type Containerd struct {
	*CRI
	// Dir holds everything of this daemon; Root and State are containerd's; Socket its gRPC
	// (and CRI) socket; NRISocket where NRI plugins connect; RuncRoot runc's --root for its
	// containers; Log the daemon's output; CtrBin ctr's path.
	Dir, Root, State, Socket, NRISocket, RuncRoot, Log, CtrBin string
	// Config is the config.toml written for it.
	Config string

	d *daemon
}

// ContainerdOptions are what a test chooses about its containerd.
type ContainerdOptions struct {
	// Rootfs is the root filesystem of TestImage (see Rootfs); a plain busybox one when
	// empty.
	Rootfs string
	// Config is more TOML appended to the configuration.
	Config string
	// Runc is the runc runtime's BinaryName (what containerd-shim-runc-v2 runs as runc): the
	// system's runc when empty; RDTRunc.Wrapper for the real runc 1.5.1 through rdtshim.
	Runc string
}

// StartContainerd starts containerd, imports TestImage into its k8s.io namespace and waits
// until its CRI plugin answers. The test is skipped where containerd, crictl, runc or podman
// are missing, unless RESCTRLSIM_REQUIRE=1. When the test ends every pod is stopped and
// removed, the daemon is stopped, and whatever is left (shims, runc containers, mounts, pod
// cgroups) is removed.
func StartContainerd(t testing.TB, o ContainerdOptions) *Containerd {
	t.Helper()
	bin, crictl, runc := criPrerequisites(t, "containerd")
	if o.Runc != "" {
		runc = o.Runc
	}
	rootfs := o.Rootfs
	if rootfs == "" {
		rootfs = Rootfs(t, nil)
	}
	archive := ImageArchive(t, rootfs)

	// Short: the shims' sockets live under it (containerd allows 42 bytes for their
	// directory).
	base := shortTempDir(t, "ctrd-")
	c := &Containerd{
		Dir:       base,
		Root:      filepath.Join(base, "root"),
		State:     filepath.Join(base, "state"),
		Socket:    filepath.Join(base, "containerd.sock"),
		NRISocket: filepath.Join(base, "nri.sock"),
		RuncRoot:  filepath.Join(base, "runc"),
		Log:       filepath.Join(base, "containerd.log"),
		Config:    filepath.Join(base, "config.toml"),
		CtrBin:    filepath.Join(bin, "ctr"),
	}
	if err := os.WriteFile(c.Config, []byte(containerdConfig(base, c, runc)+o.Config), 0o644); err != nil {
		t.Fatalf("e2e: containerd: %v", err)
	}

	c.CRI = newCRI(t, crictl, "unix://"+c.Socket, base)
	t.Cleanup(func() { c.cleanLeftovers(t, c.Dir, c.RuncRoot, runc) })
	// containerd finds its shim on PATH.
	d, err := startDaemon("containerd", c.Log, daemonEnv(bin), filepath.Join(bin, "containerd"), "--config", c.Config)
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	c.d = d
	t.Cleanup(func() {
		if err := d.stop(daemonTimeout); err != nil {
			t.Errorf("e2e: cleanup: %v; its log:\n%s", err, d.tail())
		}
	})
	t.Cleanup(func() {
		if err := c.RemoveAll(); err != nil {
			t.Errorf("e2e: cleanup: %v", err)
		}
		if t.Failed() {
			t.Logf("containerd's log:\n%s", d.tail())
		}
	})
	// The CRI plugin answers once it has loaded; the image is imported after that, through
	// the daemon, into the namespace the CRI plugin reads.
	if err := d.waitReady(daemonTimeout, c.answers); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	if _, err := c.Ctr("images", "import", archive); err != nil {
		t.Fatalf("e2e: containerd: import the test image: %v", err)
	}
	// CRI learns of the import from containerd's ImageCreate event, a moment after ctr
	// returns: an inspecti at once can fail.
	if err := poll.Until(10*time.Second, func() error { _, err := c.Command("inspecti", TestImage); return err }); err != nil {
		t.Fatalf("e2e: containerd: the imported image is not visible to CRI: %v", err)
	}
	return c
}

// Ctr runs ctr against this containerd in the CRI plugin's namespace and returns its stdout;
// an error carries its stderr.
func (c *Containerd) Ctr(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), criTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.CtrBin, append([]string{"--address", c.Socket, "--namespace", criNamespace}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// BundleDir is the bundle of a running container (a pod's sandbox ID names its pause
// container): where the runc shim put the spec it gave runc.
func (c *Containerd) BundleDir(id string) string {
	return filepath.Join(c.State, "io.containerd.runtime.v2.task", criNamespace, id)
}

// BundleSpec reads the config.json of a running container's bundle, raw and decoded.
func (c *Containerd) BundleSpec(id string) ([]byte, *specs.Spec, error) {
	raw, err := os.ReadFile(filepath.Join(c.BundleDir(id), "config.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("bundle of %s: %w", id, err)
	}
	var s specs.Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return raw, nil, fmt.Errorf("bundle of %s: decode config.json: %w", id, err)
	}
	return raw, &s, nil
}

// DaemonLog returns the end of the daemon's log.
func (c *Containerd) DaemonLog() string { return c.d.tail() }

// containerdConfig is config.toml for a daemon whose every path is under base. Version 3
// is the one seen to work here; restrict_oom_score_adj keeps runc from lowering the pause
// container's oom_score_adj, which root on these machines may not (no CAP_SYS_RESOURCE).
func containerdConfig(base string, c *Containerd, runc string) string {
	p := func(rel string) string { return fmt.Sprintf("%q", filepath.Join(base, rel)) }
	return fmt.Sprintf(`version = 3
root = %q
state = %q
temp = %s

[grpc]
  address = %q

[ttrpc]
  address = %q

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins]
  [plugins.'io.containerd.internal.v1.opt']
    path = %s

  [plugins.'io.containerd.shim.v1.manager']
    socket_dir = %s

  [plugins.'io.containerd.nri.v1.nri']
    disable = false
    socket_path = %q
    plugin_path = %s
    plugin_config_path = %s

  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"

    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = %q

  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    cdi_spec_dirs = [%s]

    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"

      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = %q
          Root = %q
          SystemdCgroup = false

    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [%s]
      conf_dir = %s

  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
`, c.Root, c.State, p("tmp"),
		c.Socket, c.Socket+".ttrpc",
		p("opt"), p("s"),
		c.NRISocket, p("nri/plugins"), p("nri/conf.d"),
		TestImage, p("cdi"),
		runc, c.RuncRoot,
		p("cni/bin"), p("cni/net.d"))
}
