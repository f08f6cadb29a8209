package install_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The make-driven tests are not parallel: make writes bin/, which the other make-driven test
// (TestDemo) runs.

// runMake runs `make -C <repo> target vars...` and returns what it printed.
func runMake(t *testing.T, target string, vars ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("make", append([]string{"-C", "../../..", target}, vars...)...).CombinedOutput()
	return string(out), err
}

func mustMake(t *testing.T, target string, vars ...string) {
	t.Helper()
	if out, err := runMake(t, target, vars...); err != nil {
		t.Fatalf("make %s %s: %v\n%s", target, strings.Join(vars, " "), err, out)
	}
}

// filesUnder lists the files under root as absolute paths of the installed system (root
// taken off), sorted.
func filesUnder(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, strings.TrimPrefix(path, root))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// registration is a hooks.d JSON file (OCI hooks schema 1.0.0).
type registration struct {
	Version string     `json:"version"`
	Hook    specs.Hook `json:"hook"`
	When    struct {
		Always *bool `json:"always"`
	} `json:"when"`
	Stages []string `json:"stages"`
}

var stages = []string{"createRuntime", "poststop"}

// readRegistration reads the hooks.d JSON of stage in dir and checks what every runtime needs
// of it: the hook at hookPath run for that stage, always, with an environment and a timeout.
func readRegistration(t *testing.T, dir, stage, hookPath string) registration {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "resctrl-mon-"+strings.ToLower(stage)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r registration
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s JSON: %v", stage, err)
	}
	if r.Version != "1.0.0" || r.Hook.Path != hookPath || r.Hook.Timeout == nil || *r.Hook.Timeout <= 0 || len(r.Hook.Env) == 0 ||
		r.When.Always == nil || !*r.When.Always || !slices.Equal(r.Stages, []string{stage}) ||
		len(r.Hook.Args) == 0 || r.Hook.Args[len(r.Hook.Args)-1] != stage {
		t.Errorf("%s registration: %s", stage, b)
	}
	return r
}

// budget is the --hookBudget the registration passes to the hook.
func budget(t *testing.T, r registration) time.Duration {
	t.Helper()
	i := slices.Index(r.Hook.Args, "--hookBudget")
	if i < 0 || i+1 >= len(r.Hook.Args) {
		t.Errorf("%v: the hook is not given --hookBudget", r.Hook.Args)
		return 0
	}
	d, err := time.ParseDuration(r.Hook.Args[i+1])
	if err != nil {
		t.Errorf("%v: --hookBudget: %v", r.Hook.Args, err)
	}
	return d
}

// checkBudget checks that the hook ends (its budget) before the runtime kills it (the timeout).
func checkBudget(t *testing.T, r registration) {
	t.Helper()
	if b := budget(t, r); b <= 0 || r.Hook.Timeout == nil || b >= time.Duration(*r.Hook.Timeout)*time.Second {
		t.Errorf("%v: the hook budget %s is not inside the runtime's timeout of %ds", r.Hook.Args, b, *r.Hook.Timeout)
	}
}

// unitLines returns the values of key (ExecStart, Documentation...) in a unit file.
func unitLines(t *testing.T, unit, key string) []string {
	t.Helper()
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+"="); ok {
			vals = append(vals, v)
		}
	}
	return vals
}

// conditions returns the unit's Condition*= and Assert*= lines, as systemd-analyze condition
// takes them.
func conditions(t *testing.T, unit string) []string {
	t.Helper()
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	var conds []string
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "Condition") || strings.HasPrefix(line, "Assert") {
			conds = append(conds, line)
		}
	}
	return conds
}

// installed is where one install puts each kind of file.
type installed struct{ bin, libexec, hooks, conf, units, doc string }

func (l installed) files() []string {
	f := []string{
		l.bin + "/resctrl-mon",
		l.bin + "/resctrl-mon-runtime",
		l.bin + "/resctrl-mon-nri",
		l.bin + "/kubectl-resctrl_mon", // the kubectl plugin
		l.libexec + "/resctrl-mon-hook",
		l.hooks + "/resctrl-mon-createruntime.json",
		l.hooks + "/resctrl-mon-poststop.json",
		l.conf + "/config.yaml",
		l.conf + "/host-install.json", // what host install wrote (the hook and its JSON)
		l.units + "/resctrl-mon-reconcile.service",
		l.units + "/resctrl-mon-reconcile.timer",
		l.units + "/resctrl-mon-serve.service",
		l.units + "/resctrl-mon-nri.service",
		l.doc + "/README.md",
		l.doc + "/test/README.md",
		l.doc + "/install/helm/resctrl-mon/README.md", // the chart's values, which the Kubernetes pages link to
		l.doc + "/examples/containerd-nri.toml",
		l.doc + "/examples/crio-nri.conf",
	}
	for _, page := range docPages() {
		f = append(f, l.doc+"/docs/"+page)
	}
	slices.Sort(f)
	return f
}

// docPages lists the repository's docs/ pages, relative to docs/: the README installed beside
// them links into them.
func docPages() []string {
	var pages []string
	_ = filepath.WalkDir("../../../docs", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, strings.TrimPrefix(p, "../../../docs/"))
		}
		return err
	})
	return pages
}

// mdLink finds a markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// checkInstalledDocLinks fails for a link to a page (.md) in the installed README or docs
// that does not resolve in the installed tree: the units' Documentation= names that README,
// and a reader on the node follows its links from there.
func checkInstalledDocLinks(t *testing.T, docDir string) {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(docDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if !strings.HasSuffix(target, ".md") || strings.Contains(target, "://") {
				continue
			}
			n++
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), target)); err != nil {
				t.Errorf("installed %s links to %s, which is not installed", strings.TrimPrefix(p, docDir), m[1])
			}
		}
		return nil
	})
	if n == 0 {
		t.Errorf("no link to a page found under %s", docDir)
	}
}

// TestInstallLayout installs into a DESTDIR with each documented way of choosing directories
// and checks that every file lands where the README says, nothing else is installed (the test
// simulator is not part of the product), the files name each other by their installed paths,
// the binaries read the config where it was installed, and uninstall leaves only the config.
func TestInstallLayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars []string
		want installed
	}{{
		// docs/install/crio-podman-hooks.md's `sudo make install`: programs under /usr/local, the config in /etc,
		// the JSON where CRI-O (1.34 default hooks_dir) and podman look, units where
		// systemd looks for the administrator's own.
		name: "default",
		want: installed{"/usr/local/bin", "/usr/local/libexec/oci/hooks.d", "/usr/share/containers/oci/hooks.d",
			"/etc/resctrl-mon", "/usr/local/lib/systemd/system", "/usr/local/share/doc/resctrl-mon"},
	}, {
		name: "distribution",
		vars: []string{"PREFIX=/usr"},
		want: installed{"/usr/bin", "/usr/libexec/oci/hooks.d", "/usr/share/containers/oci/hooks.d",
			"/etc/resctrl-mon", "/usr/lib/systemd/system", "/usr/share/doc/resctrl-mon"},
	}, {
		// Any other prefix keeps everything inside it.
		name: "own prefix",
		vars: []string{"PREFIX=/opt/rm"},
		want: installed{"/opt/rm/bin", "/opt/rm/libexec/oci/hooks.d", "/opt/rm/share/containers/oci/hooks.d",
			"/opt/rm/etc/resctrl-mon", "/opt/rm/lib/systemd/system", "/opt/rm/share/doc/resctrl-mon"},
	}, {
		name: "own prefix, system config",
		vars: []string{"PREFIX=/opt/rm", "SYSCONFDIR=/etc"},
		want: installed{"/opt/rm/bin", "/opt/rm/libexec/oci/hooks.d", "/opt/rm/share/containers/oci/hooks.d",
			"/etc/resctrl-mon", "/opt/rm/lib/systemd/system", "/opt/rm/share/doc/resctrl-mon"},
	}, {
		name: "every directory named",
		vars: []string{"PREFIX=/opt/rm", "BINDIR=/sbin", "LIBEXECDIR=/usr/libexec/rm", "HOOKSDIR=/etc/containers/oci/hooks.d",
			"CONFDIR=/etc/rm", "UNITDIR=/etc/systemd/system", "DOCDIR=/usr/share/doc/rm"},
		want: installed{"/sbin", "/usr/libexec/rm", "/etc/containers/oci/hooks.d", "/etc/rm", "/etc/systemd/system", "/usr/share/doc/rm"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			vars := append([]string{"DESTDIR=" + d}, tc.vars...)
			mustMake(t, "install", vars...)
			if got := filesUnder(t, d); !slices.Equal(got, tc.want.files()) {
				t.Fatalf("make install %s installed\n  %s\nwant\n  %s", strings.Join(tc.vars, " "),
					strings.Join(got, "\n  "), strings.Join(tc.want.files(), "\n  "))
			}
			for _, stage := range stages {
				checkBudget(t, readRegistration(t, d+tc.want.hooks, stage, tc.want.libexec+"/resctrl-mon-hook"))
			}
			service := d + tc.want.units + "/resctrl-mon-reconcile.service"
			if got := unitLines(t, service, "ExecStart"); len(got) != 1 || !strings.HasPrefix(got[0], tc.want.bin+"/resctrl-mon reconcile") {
				t.Errorf("ExecStart=%q, want %s/resctrl-mon reconcile", got, tc.want.bin)
			}
			if got := unitLines(t, service, "Documentation"); !slices.Equal(got, []string{"file://" + tc.want.doc + "/README.md"}) {
				t.Errorf("Documentation=%q, want the installed README", got)
			}
			serve := d + tc.want.units + "/resctrl-mon-serve.service"
			if got := unitLines(t, serve, "ExecStart"); len(got) != 1 || !strings.HasPrefix(got[0], tc.want.bin+"/resctrl-mon serve") {
				t.Errorf("serve unit: ExecStart=%q, want %s/resctrl-mon serve", got, tc.want.bin)
			}
			if got := unitLines(t, serve, "EnvironmentFile"); !slices.Equal(got, []string{"-" + tc.want.conf + "/serve.env"}) {
				t.Errorf("serve unit: EnvironmentFile=%q, want the optional %s/serve.env", got, tc.want.conf)
			}
			if got := unitLines(t, serve, "Documentation"); !slices.Equal(got, []string{"file://" + tc.want.doc + "/README.md"}) {
				t.Errorf("serve unit: Documentation=%q, want the installed README", got)
			}
			nri := d + tc.want.units + "/resctrl-mon-nri.service"
			if got := unitLines(t, nri, "ExecStart"); !slices.Equal(got, []string{tc.want.bin + "/resctrl-mon-nri $NRI_ARGS"}) {
				t.Errorf("NRI unit: ExecStart=%q, want %s/resctrl-mon-nri $NRI_ARGS", got, tc.want.bin)
			}
			if got := unitLines(t, nri, "EnvironmentFile"); !slices.Equal(got, []string{"-" + tc.want.conf + "/nri.env"}) {
				t.Errorf("NRI unit: EnvironmentFile=%q, want the optional %s/nri.env", got, tc.want.conf)
			}
			if got := unitLines(t, nri, "Documentation"); !slices.Equal(got, []string{"file://" + tc.want.doc + "/README.md"}) {
				t.Errorf("NRI unit: Documentation=%q, want the installed README", got)
			}
			// Both binaries look for the config where it was installed (their --help says
			// where), not where a default build would.
			conf := tc.want.conf + "/config.yaml"
			for _, bin := range []string{d + tc.want.bin + "/resctrl-mon", d + tc.want.libexec + "/resctrl-mon-hook"} {
				out, _ := exec.Command(bin, "--help").CombinedOutput()
				if !strings.Contains(string(out), "(default "+conf+" if it exists)") {
					t.Errorf("%s --help does not name %s as the default config:\n%s", bin, conf, out)
				}
			}
			checkWrapperHook(t, d+tc.want.bin+"/resctrl-mon-runtime", tc.want.libexec+"/resctrl-mon-hook")
			checkInstalledDocLinks(t, d+tc.want.doc)
			mustMake(t, "uninstall", vars...)
			if got := filesUnder(t, d); !slices.Equal(got, []string{conf}) {
				t.Errorf("after uninstall: %v, want only the config", got)
			}
		})
	}
}

// TestInstallHookTimeout: HOOK_TIMEOUT sets the JSON's timeout, and the hook's budget is two
// seconds less; a timeout that leaves no budget is refused before anything is installed.
func TestInstallHookTimeout(t *testing.T) {
	d := t.TempDir()
	hooksDir := d + "/usr/share/containers/oci/hooks.d"
	mustMake(t, "install", "DESTDIR="+d, "HOOK_TIMEOUT=5")
	for _, stage := range stages {
		r := readRegistration(t, hooksDir, stage, "/usr/local/libexec/oci/hooks.d/resctrl-mon-hook")
		if *r.Hook.Timeout != 5 || budget(t, r) != 3*time.Second {
			t.Errorf("HOOK_TIMEOUT=5: %s timeout %d, budget %s; want 5 and 3s", stage, *r.Hook.Timeout, budget(t, r))
		}
	}
	mustMake(t, "uninstall", "DESTDIR="+d)
	for _, bad := range []string{"2", "ten", "", "4000"} {
		d := t.TempDir()
		out, err := runMake(t, "install", "DESTDIR="+d, "HOOK_TIMEOUT="+bad)
		if err == nil || !strings.Contains(out, "HOOK_TIMEOUT") {
			t.Errorf("HOOK_TIMEOUT=%q: make install: %v, want a refusal naming HOOK_TIMEOUT:\n%s", bad, err, out)
		}
		if files := filesUnder(t, d); len(files) != 0 {
			t.Errorf("HOOK_TIMEOUT=%q: installed %v anyway", bad, files)
		}
	}
}

// TestInstall runs `make install PREFIX=<scratch>` for real and runs what a runtime and systemd
// will run: the hook exactly as its hooks.d JSON says, reading the installed config without
// being told where it is, and the reconcile unit, which must follow the config's resctrlRoot.
// A second install keeps the admin's config; uninstall removes everything else.
func TestInstall(t *testing.T) {
	p := t.TempDir()
	vars := []string{"PREFIX=" + p}
	// Into a scratch DESTDIR first: an install that writes outside PREFIX must not reach this
	// host's /etc.
	d := t.TempDir()
	mustMake(t, "install", append(vars, "DESTDIR="+d)...)
	if outside := slices.DeleteFunc(filesUnder(t, d), func(f string) bool { return strings.HasPrefix(f, p+"/") }); len(outside) > 0 {
		t.Fatalf("make install PREFIX=%s writes outside PREFIX: %v", p, outside)
	}
	mustMake(t, "install", vars...)

	hook := filepath.Join(p, "libexec/oci/hooks.d/resctrl-mon-hook")
	cli := filepath.Join(p, "bin/resctrl-mon")
	for _, f := range []string{hook, cli} {
		if fi, err := os.Stat(f); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	regs := map[string]registration{}
	for _, stage := range stages {
		regs[stage] = readRegistration(t, filepath.Join(p, "share/containers/oci/hooks.d"), stage, hook)
		checkBudget(t, regs[stage])
	}
	units := []string{filepath.Join(p, "lib/systemd/system/resctrl-mon-reconcile.service"), filepath.Join(p, "lib/systemd/system/resctrl-mon-reconcile.timer"),
		filepath.Join(p, "lib/systemd/system/resctrl-mon-serve.service"), filepath.Join(p, "lib/systemd/system/resctrl-mon-nri.service")}
	serveUnit, nriUnit := units[2], units[3]
	if path, err := exec.LookPath("systemd-analyze"); err == nil {
		if out, err := exec.Command(path, append([]string{"verify"}, units...)...).CombinedOutput(); err != nil {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
		// serve runs for good and listens on the network: it keeps its hardening. systemd
		// scores exposure from 0 (locked down) to 10 (none); the threshold is in tenths, and
		// the unit scores 1.8.
		if out, err := exec.Command(path, "security", "--offline=yes", "--threshold=25", serveUnit).CombinedOutput(); err != nil {
			t.Errorf("systemd-analyze security: the serve unit lost its hardening: %v\n%s", err, out)
		}
		// The adapter writes resctrl and the state dir and listens on a socket: hardened
		// the same way, with write access to those two; it scores 1.8.
		if out, err := exec.Command(path, "security", "--offline=yes", "--threshold=25", nriUnit).CombinedOutput(); err != nil {
			t.Errorf("systemd-analyze security: the NRI unit lost its hardening: %v\n%s", err, out)
		}
	} else if os.Getenv("RESCTRLSIM_REQUIRE") == "1" {
		t.Errorf("systemd-analyze is missing: %v", err)
	}
	execStart := unitLines(t, units[0], "ExecStart")
	if len(execStart) != 1 || !strings.HasPrefix(execStart[0], cli+" reconcile") {
		t.Fatalf("the service does not run the installed reconcile: ExecStart=%q", execStart)
	}
	if b, _ := os.ReadFile(units[0]); strings.Contains(string(b), "/sys/fs/resctrl") {
		t.Errorf("the service names /sys/fs/resctrl: where resctrl is is the config's resctrlRoot\n%s", b)
	}

	cfgPath := filepath.Join(p, "etc/resctrl-mon/config.yaml")
	f, err := os.Open(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse(f); err != nil {
		t.Errorf("installed config: %v", err)
	}
	_ = f.Close()
	// From here on the config is the admin's: the binaries must find it where it was installed.
	scratch := t.TempDir() // what the binaries write, apart from the install
	hookLog := filepath.Join(scratch, "hook.log")
	setConfig := func(root string) {
		t.Helper()
		cfg := "resctrlRoot: " + root + "\nresctrlSimulator: true\nstateDir: " + scratch + "/state\nsnapshotDir: \"\"\nlog: file:" + hookLog + "\nruntimeRoots: [" + scratch + "/runc]\n"
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("hook as registered", func(t *testing.T) {
		setConfig(filepath.Join(scratch, "no-resctrl"))
		r := regs["createRuntime"]
		// No state on stdin: the hook must accept its arguments (a usage error exits 2), read
		// the installed config (its log: file), and fail open.
		cmd := exec.Command(r.Hook.Path, r.Hook.Args[1:]...)
		cmd.Env = r.Hook.Env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s %v: %v\n%s", r.Hook.Path, r.Hook.Args[1:], err, out)
		}
		if b, err := os.ReadFile(hookLog); err != nil || !strings.Contains(string(b), "stage=createRuntime") {
			t.Errorf("the hook did not log to the installed config's log: %v\n%s", err, b)
		}
	})

	// The unit runs exactly its ExecStart, in systemd's bare environment.
	runUnit := func(t *testing.T) (string, error) {
		t.Helper()
		args := strings.Fields(execStart[0])
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Run("unit, resctrl not mounted", func(t *testing.T) {
		root := filepath.Join(scratch, "no-resctrl")
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		setConfig(root)
		out, err := runUnit(t)
		if err != nil || !strings.Contains(out, "resctrl not mounted at "+root) {
			t.Errorf("the unit without resctrl at the config's root: %v, want success saying so:\n%s", err, out)
		}
		// By hand, the same is an error: the operator asked for a reconcile.
		out2, err := exec.Command(cli, "reconcile").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !strings.Contains(string(out2), root) {
			t.Errorf("resctrl-mon reconcile without resctrl: %v, want an error naming %s:\n%s", err, root, out2)
		}
	})
	t.Run("unit, resctrl mounted where the config says", func(t *testing.T) {
		sim := resctrlsim.MountT(t, resctrlsim.Options{})
		setConfig(sim.Dir)
		// Whatever conditions the unit has must hold now.
		if conds := conditions(t, units[0]); len(conds) > 0 {
			if out, err := exec.Command("systemd-analyze", append([]string{"condition"}, conds...)...).CombinedOutput(); err != nil {
				t.Errorf("with resctrl mounted at the config's %s, the unit is skipped: %v\n%s", sim.Dir, err, out)
			}
		}
		if out, err := runUnit(t); err != nil || !strings.Contains(out, "live containers") {
			t.Errorf("the unit with resctrl at %s: %v\n%s", sim.Dir, err, out)
		}
	})

	t.Run("serve unit, resctrl mounted where the config says", func(t *testing.T) {
		sim := resctrlsim.MountT(t, resctrlsim.Options{})
		setConfig(sim.Dir)
		if out, err := exec.Command(cli, "reconcile").CombinedOutput(); err != nil { // makes the state dir
			t.Fatalf("reconcile: %v\n%s", err, out)
		}
		// The admin's serve.env, where the unit reads it, picks the port; the test runs the
		// unit's ExecStart as systemd would: its EnvironmentFile's variables expanded, in
		// systemd's bare environment.
		envFile := strings.TrimPrefix(unitLines(t, serveUnit, "EnvironmentFile")[0], "-")
		if err := os.WriteFile(envFile, []byte("# where Prometheus scrapes\nSERVE_ARGS=--listen 127.0.0.1:0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove(envFile) })
		args := systemdExpand(t, unitLines(t, serveUnit, "ExecStart")[0], envFile)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		s := e2e.RunServe(t, cmd)
		if code, body := e2e.HTTPGet(t, "http://"+s.Addr+"/metrics", "", ""); code != 200 || !strings.Contains(body, "resctrl_mon_inventory_up 1") {
			t.Errorf("the serve unit with resctrl at %s: /metrics %d, want resctrl_mon_inventory_up 1:\n%s", sim.Dir, code, body)
		}
		if code, body := e2e.HTTPGet(t, "http://"+s.Addr+"/healthz", "", ""); code != 200 {
			t.Errorf("the serve unit: /healthz %d %s", code, body)
		}
		s.Stop(t)
	})

	t.Run("NRI unit, against containerd, with the unit's capabilities", func(t *testing.T) {
		runNRIUnit(t, nriUnit, cfgPath)
	})

	if err := os.WriteFile(cfgPath, []byte("retention: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustMake(t, "install", vars...)
	if b, _ := os.ReadFile(cfgPath); string(b) != "retention: 1m\n" {
		t.Errorf("a second install replaced the admin's config")
	}
	mustMake(t, "uninstall", vars...)
	if left := filesUnder(t, p); !slices.Equal(left, []string{"/etc/resctrl-mon/config.yaml"}) {
		t.Errorf("after uninstall: %v, want only the config", left)
	}
}

// systemdExpand splits an ExecStart= line as systemd does with the variables of an
// EnvironmentFile: an unquoted $VAR becomes as many words as its value has.
func systemdExpand(t *testing.T, execStart, envFile string) []string {
	t.Helper()
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			env[k] = v
		}
	}
	var args []string
	for _, w := range strings.Fields(execStart) {
		if name, ok := strings.CutPrefix(w, "$"); ok {
			args = append(args, strings.Fields(env[name])...)
			continue
		}
		args = append(args, w)
	}
	return args
}

// checkWrapperHook runs the installed runtime wrapper's create on a bundle (with /bin/true
// for the real runtime) and checks that it lists the hook where the install put it.
func checkWrapperHook(t *testing.T, wrapper, hook string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("runtime: /bin/true\nstateDir: "+dir+"/state\nlog: file:"+dir+"/log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wrapper, "create", "--bundle", dir, "c1")
	cmd.Env = []string{config.ConfigEnv + "=" + cfg}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s create: %v\n%s", wrapper, err, out)
	}
	var spec specs.Spec
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil || spec.Hooks == nil || len(spec.Hooks.CreateRuntime) != 1 || spec.Hooks.CreateRuntime[0].Path != hook {
		t.Errorf("the installed wrapper lists %s, want the hook at %s (%v)", b, hook, err)
	}
}

// runNRIUnit runs the NRI unit's ExecStart as systemd would (its EnvironmentFile's variables
// expanded, a bare environment, no new privileges) with no capability outside the unit's
// CapabilityBoundingSet, against a real containerd and the simulator, reading the installed
// config at cfgPath: a pod's forking containers must be placed, every task. This is the
// measurement behind the unit's capabilities.
func runNRIUnit(t *testing.T, unit, cfgPath string) {
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	b, err := os.ReadFile(e.CfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil { // the installed config, unnamed on the command line
		t.Fatal(err)
	}
	ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	envFile := strings.TrimPrefix(unitLines(t, unit, "EnvironmentFile")[0], "-")
	if err := os.WriteFile(envFile, []byte("NRI_ARGS=--nri-socket "+ctrd.NRISocket+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(envFile) })
	bounding := "-all"
	for _, line := range unitLines(t, unit, "CapabilityBoundingSet") {
		for c := range strings.FieldsSeq(line) {
			bounding += ",+" + strings.ToLower(strings.TrimPrefix(c, "CAP_"))
		}
	}
	args := systemdExpand(t, unitLines(t, unit, "ExecStart")[0], envFile)
	cmd := exec.Command("setpriv", append([]string{"--bounding-set", bounding, "--inh-caps", "-all", "--ambient-caps", "-all", "--no-new-privs", "--"}, args...)...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	e2e.StartAdapterCmd(t, e, cmd)
	// setpriv execs the adapter in its place: what the process has is what the unit gives.
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	caps := map[string]string{}
	for line := range strings.Lines(string(status)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(k, "Cap") {
			caps[k] = strings.TrimSpace(v)
		}
	}
	t.Logf("the adapter runs as the unit sets it (bounding set %s): %v", bounding, caps)
	if !strings.Contains(string(status), "NoNewPrivs:\t1") {
		t.Errorf("the adapter runs with new privileges allowed:\n%s", status)
	}
	if bounding == "-all" && (caps["CapEff"] != "0000000000000000" || caps["CapBnd"] != "0000000000000000") {
		t.Fatalf("the adapter has capabilities the unit does not give: %v", caps)
	}

	group := "mon_groups/" + e2e.PodUIDA
	pod, err := ctrd.RunPod(e2e.PodSpec{Name: "unit", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	e.WantForkersPlaced(t, ctrd.CRI, group, e2e.RunForkers(t, e, ctrd.CRI, pod, "app", "sidecar"))
	e.EndCRIPod(t, ctrd.CRI, pod.ID, group)
}
