package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Binaries are the programs the tests run, set by BuildBinaries: the hook, the forking
// workload, the no-op hook, the CLI, the hooks that put a container in a class and that
// capture what a runtime sends, the runtime wrapper and a no-op one, the NRI adapter and a
// no-op NRI plugin, and the launcher that lets the real runc apply linux.intelRdt on the
// simulator.
var Binaries struct {
	Dir                     string
	Hook, Forker, Noop      string
	CLI, ClassHook, Capture string
	Wrapper, NoopWrapper    string
	NRI, NoopNRI            string
	RDTShim                 string
}

var (
	binariesOnce sync.Once
	binariesErr  error
)

// binaryPackages are the packages BuildBinaries builds (relative to the module's root), by
// where their path goes in Binaries.
var binaryPackages = map[*string]string{
	&Binaries.Hook: "./hooks/resctrl-mon-hook", &Binaries.Forker: "./test/e2e/forker", &Binaries.Noop: "./test/e2e/noophook",
	&Binaries.CLI: "./cmd/resctrl-mon", &Binaries.ClassHook: "./test/e2e/classhook", &Binaries.Capture: "./test/e2e/capturehook",
	&Binaries.Wrapper: "./install/resctrl-mon-runtime", &Binaries.NoopWrapper: "./test/e2e/noopwrapper",
	&Binaries.NRI: "./nri-adapter/resctrl-mon-nri", &Binaries.NoopNRI: "./test/e2e/noopnri",
	&Binaries.RDTShim: "./test/e2e/rdtshim",
}

// BuildBinaries builds Binaries once per source tree, not once per test binary: `go test
// ./test/e2e/...` runs one test binary per package, and linking ten static binaries again
// for each would cost every package seconds. The build directory is named by a hash of the
// sources that go into them (as go list reports them, embedded files included), so
// packages of one run share it, and a changed tree gets its own. A lock on it makes the
// packages that start together wait for the one that builds.
func BuildBinaries(t testing.TB) {
	t.Helper()
	binariesOnce.Do(func() { binariesErr = buildBinaries() })
	if binariesErr != nil {
		t.Fatal(binariesErr)
	}
}

func buildBinaries() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	var pkgs []string
	for _, pkg := range binaryPackages {
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs) // the map's order changes: the hash must not
	sum, err := sourceHash(root, pkgs)
	if err != nil {
		return err
	}
	base := filepath.Join(os.TempDir(), "resctrl-mon-e2e-bin")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return fmt.Errorf("e2e binaries: %w", err)
	}
	dir := filepath.Join(base, sum)
	// Two locks: ".lock" held shared while a test binary uses the build (to the end of the
	// process), which pruneBuilds needs exclusive; ".build" held exclusive while one builds,
	// so the packages that start together wait for one build.
	// The shared lock is a bare descriptor, left open to the end of the process: an
	// *os.File would be closed by its finalizer once unreachable, dropping the lock.
	use, err := lockFile(dir+".lock", unix.LOCK_SH)
	if err != nil {
		return err
	}
	build, err := lockFile(dir+".build", unix.LOCK_EX)
	if err != nil {
		_ = unix.Close(use)
		return err
	}
	err = buildInto(root, dir, pkgs)
	_ = unix.Close(build)
	if err != nil {
		_ = unix.Close(use)
		return err
	}
	for out, pkg := range binaryPackages {
		*out = filepath.Join(dir, filepath.Base(pkg))
	}
	Binaries.Dir = dir
	pruneBuilds(base, sum)
	return nil
}

// lockFile opens (or creates) path, close-on-exec so that the daemons a test starts do not
// hold it, and locks it with how (unix.LOCK_SH or LOCK_EX, maybe with LOCK_NB).
func lockFile(path string, how int) (int, error) {
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return -1, fmt.Errorf("e2e binaries: open %s: %w", path, err)
	}
	if err := unix.Flock(fd, how); err != nil {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("e2e binaries: lock %s: %w", path, err)
	}
	return fd, nil
}

// buildInto builds pkgs into dir unless a finished build is there.
func buildInto(root, dir string, pkgs []string) error {
	done := filepath.Join(dir, ".built")
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	// A build that was killed halfway left a directory without .built: start again.
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("e2e binaries: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("e2e binaries: %w", err)
	}
	cmd := exec.Command("go", append([]string{"build", "-trimpath", "-tags", "urfave_cli_no_docs", "-o", dir + "/"}, pkgs...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, b)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return fmt.Errorf("e2e binaries: %w", err)
	}
	return nil
}

// pruneBuilds removes the builds of other source trees that no test binary uses or builds
// now (both their locks are free), so edits between runs do not fill the temporary
// directory with binaries.
func pruneBuilds(base, keep string) {
	locks, _ := filepath.Glob(filepath.Join(base, "*.lock"))
	for _, l := range locks {
		dir := strings.TrimSuffix(l, ".lock")
		if filepath.Base(dir) == keep {
			continue
		}
		use, err := lockFile(l, unix.LOCK_EX|unix.LOCK_NB)
		if err != nil {
			continue
		}
		if build, err := lockFile(dir+".build", unix.LOCK_EX|unix.LOCK_NB); err == nil {
			_ = os.RemoveAll(dir)
			// A day unused, the lock files go too (a run that opened one just now would
			// at worst build again beside another).
			if fi, err := os.Stat(l); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
				_ = os.Remove(l)
				_ = os.Remove(dir + ".build")
			}
			_ = unix.Close(build)
		}
		_ = unix.Close(use)
	}
}

// moduleRoot is the directory of the go.mod above the test's working directory (go test
// runs a test in its package's directory).
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("e2e binaries: not inside the module (go env GOMOD: %q)", gomod)
	}
	return filepath.Dir(gomod), nil
}

// sourceHash hashes the toolchain and every file of the main module that goes into pkgs:
// their Go files and embedded files, as go list has them, and go.mod and go.sum (the
// dependencies outside the module are fixed by go.sum).
func sourceHash(root string, pkgs []string) (string, error) {
	args := append([]string{"list", "-tags", "urfave_cli_no_docs", "-deps", "-f",
		`{{if and .Module .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}`}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %w\n%s", strings.Join(pkgs, " "), err, stderr.Bytes())
	}
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version())
	files := append(strings.Fields(string(out)), filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum"))
	slices.Sort(files)
	files = slices.Compact(files)
	for _, f := range files {
		fmt.Fprintln(h, f)
		r, err := os.Open(f)
		if err != nil {
			return "", fmt.Errorf("e2e binaries: hash sources: %w", err)
		}
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return "", fmt.Errorf("e2e binaries: hash %s: %w", f, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
