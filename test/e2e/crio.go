package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonTimeout bounds a daemon's start (until it answers crictl) and its stop.
const daemonTimeout = time.Minute

// CRIO is a CRI-O daemon of a test's own (test/runtimes/crio.sh builds it), with every path
// private to it: storage, runtime state, socket, namespaces, exits, logs and configuration.
// Its CRI field drives it with crictl.
//
// The configuration is the one seen to run on these machines (runc and conmon from Debian,
// cgroupfs, vfs storage, no iptables, no CNI): pods use the host's network, and the pause
// image is TestImage, imported with podman into CRI-O's store. The infra container is
// dropped (drop_infra_ctr, CRI-O's default) for pods with a PID namespace per container, as
// kubelet makes them; runc could not start it here anyway (its oom_score_adj of -998 needs
// CAP_SYS_RESOURCE, which root may lack: in a VM or container that dropped it).
type CRIO struct {
	*CRI
	// Dir holds everything of this daemon; Root and RunRoot are its storage; Socket its
	// CRI socket; NRISocket where NRI plugins connect; HooksDir its hooks_dir; RuncRoot
	// runc's --root for its containers; Log the daemon's output.
	Dir, Root, RunRoot, Socket, NRISocket, HooksDir, RuncRoot, Log string
	// Config is the crio.conf written for it.
	Config string

	bin  string   // crio
	args []string // its flags: the same at every start
	env  []string
	d    *daemon // the daemon last started
}

// CRIOOptions are what a test chooses about its CRI-O.
type CRIOOptions struct {
	// HooksDir is the hooks.d directory (see WriteHooksDir); an empty one when empty.
	HooksDir string
	// Rootfs is the root filesystem of TestImage (see Rootfs); a plain busybox one when
	// empty.
	Rootfs string
	// Config is more TOML appended to the configuration (later keys of a table must be
	// given in a table header of their own).
	Config string
}

// StartCRIO starts CRI-O and waits until it answers. The test is skipped where CRI-O,
// crictl, runc, conmon or podman are missing, unless RESCTRLSIM_REQUIRE=1. When the test
// ends, every pod is stopped and removed (their poststop hooks run while the world the test
// set up before is whole), the daemon is stopped, and whatever is left (conmon processes,
// runc containers, mounts, pod cgroups) is removed.
func StartCRIO(t testing.TB, o CRIOOptions) *CRIO {
	t.Helper()
	crioBin, crictl, runc := criPrerequisites(t, "crio")
	conmon := lookBin(t, "conmon")
	rootfs := o.Rootfs
	if rootfs == "" {
		rootfs = Rootfs(t, nil)
	}

	// Short: conmon's attach sockets live under it.
	base := shortTempDir(t, "crio-")
	c := &CRIO{
		Dir:       base,
		Root:      filepath.Join(base, "root"),
		RunRoot:   filepath.Join(base, "run"),
		Socket:    filepath.Join(base, "crio.sock"),
		NRISocket: filepath.Join(base, "nri.sock"),
		HooksDir:  o.HooksDir,
		RuncRoot:  filepath.Join(base, "runc"),
		Log:       filepath.Join(base, "crio.log"),
		Config:    filepath.Join(base, "crio.conf"),
	}
	if c.HooksDir == "" {
		c.HooksDir = filepath.Join(base, "hooks.d")
	}
	for _, d := range []string{c.Root, c.RunRoot, c.HooksDir, c.RuncRoot, filepath.Join(base, "conf.d")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("e2e: crio: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "policy.json"), []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644); err != nil {
		t.Fatalf("e2e: crio: %v", err)
	}
	conf := crioConfig(base, c, runc, conmon, filepath.Join(crioBin, "pinns")) + o.Config
	if err := os.WriteFile(c.Config, []byte(conf), 0o644); err != nil {
		t.Fatalf("e2e: crio: %v", err)
	}

	// The image goes into CRI-O's store before CRI-O opens it.
	if err := importImage(c.Root, c.RunRoot, rootfs); err != nil {
		t.Fatalf("e2e: crio: import the test image: %v", err)
	}

	c.CRI = newCRI(t, crictl, "unix://"+c.Socket, base)
	c.bin = filepath.Join(crioBin, "crio")
	c.args = []string{"--config", c.Config, "--config-dir", filepath.Join(base, "conf.d")}
	c.env = daemonEnv(crioBin)
	// Cleanups run in reverse: pods first, then the daemon, then what is left, then base.
	t.Cleanup(func() { c.cleanLeftovers(t, c.Dir, c.RuncRoot, "") })
	t.Cleanup(func() {
		if c.d == nil {
			return
		}
		if err := c.d.stop(daemonTimeout); err != nil {
			t.Errorf("e2e: cleanup: %v; its log:\n%s", err, c.d.tail())
		}
	})
	t.Cleanup(func() {
		// A test that stopped the daemon and failed before it started it again: the pods
		// are removed by a daemon all the same, so that their poststop hooks run.
		if c.d != nil && c.d.exited() {
			if err := c.StartDaemon(); err != nil {
				t.Errorf("e2e: cleanup: %v", err)
				return
			}
		}
		if err := c.RemoveAll(); err != nil {
			t.Errorf("e2e: cleanup: %v", err)
		}
		if t.Failed() && c.d != nil {
			t.Logf("crio's log:\n%s", c.d.tail())
		}
	})
	if err := c.StartDaemon(); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	return c
}

// Version returns what `crictl version` says of the runtime.
func (c *CRIO) Version() (string, error) {
	out, err := c.Command("version")
	return strings.TrimSpace(string(out)), err
}

// StartDaemon starts the daemon (again, after StopDaemon) on the same configuration,
// storage and state, and waits until it answers. Its output is appended to the same log.
func (c *CRIO) StartDaemon() error {
	if c.d != nil && !c.d.exited() {
		return errors.New("start crio: it is running")
	}
	d, err := startDaemon("crio", c.Log, c.env, c.bin, c.args...)
	if err != nil {
		return err
	}
	c.d = d
	return d.waitReady(daemonTimeout, c.answers)
}

// StopDaemon sends the daemon sig and waits until it has exited: SIGTERM is a graceful
// shutdown, SIGKILL a crash. Whatever the daemon leaves (its containers and their conmon
// processes, its storage and state) stays, for StartDaemon.
func (c *CRIO) StopDaemon(sig syscall.Signal) error {
	return c.d.signal(sig, daemonTimeout)
}

// Restart stops the daemon with sig and starts it again (see StopDaemon, StartDaemon).
func (c *CRIO) Restart(sig syscall.Signal) error {
	if err := c.StopDaemon(sig); err != nil {
		return err
	}
	return c.StartDaemon()
}

// DaemonLog returns the end of the daemon's log.
func (c *CRIO) DaemonLog() string { return c.d.tail() }

// crioConfig is crio.conf for a daemon whose every path is under base.
func crioConfig(base string, c *CRIO, runc, conmon, pinns string) string {
	p := func(rel string) string { return fmt.Sprintf("%q", filepath.Join(base, rel)) }
	return fmt.Sprintf(`[crio]
root = %q
runroot = %q
storage_driver = "vfs"
log_dir = %s
version_file = %s
version_file_persist = %s
clean_shutdown_file = %s

[crio.api]
listen = %q
stream_address = "127.0.0.1"
stream_port = "0"

[crio.runtime]
default_runtime = "runc"
cgroup_manager = "cgroupfs"
hooks_dir = [%q]
pinns_path = %q
namespaces_dir = %s
container_exits_dir = %s
container_attach_socket_dir = %s
decryption_keys_path = %s
cdi_spec_dirs = [%s]
# No iptables or nft on these machines: CRI-O fails to start without this.
disable_hostport_mapping = true
irqbalance_config_file = %s
irqbalance_config_restore_file = "disable"
drop_infra_ctr = true
log_level = "info"

[crio.runtime.runtimes.runc]
runtime_path = %q
runtime_type = "oci"
runtime_root = %q
monitor_path = %q
monitor_cgroup = "pod"
monitor_env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]

[crio.image]
pause_image = %q
# Empty: the pause image's own command (sleep infinity).
pause_command = ""
signature_policy = %s
signature_policy_dir = %s
big_files_temporary_dir = %s

[crio.network]
network_dir = %s
plugin_dirs = [%s]

[crio.metrics]
enable_metrics = false

[crio.nri]
enable_nri = true
nri_listen = %q
nri_plugin_dir = %s
nri_plugin_config_dir = %s
`, c.Root, c.RunRoot, p("pods"), p("version"), p("version.persist"), p("clean.shutdown"),
		c.Socket,
		c.HooksDir, pinns, p("ns"), p("exits"), p("attach"), p("keys"), p("cdi"), p("irqbalance"),
		runc, c.RuncRoot, conmon,
		TestImage, p("policy.json"), p("policies"), p("tmp"),
		p("cni/net.d"), p("cni/bin"),
		c.NRISocket, p("nri/plugins"), p("nri/conf.d"))
}
