package runtimes_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// helperSource is a Go program that tests copy into the rootfs.
const helperSource = `package main

import (
	"fmt"
	"os"
)

func main() {
	host, _ := os.Hostname()
	fmt.Printf("helper on %s: %v\n", host, os.Args[1:])
}
`

// TestRootfsExtraBinary builds a static Go helper, puts it in a rootfs, and runs it with
// Runtime.Run, reading its output from the bundle's stdout file.
func TestRootfsExtraBinary(t *testing.T) {
	t.Parallel()
	r := e2e.NewRuntime(t, "runc")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(helperSource), 0o644); err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building the helper needs go on PATH: %v", err)
	}
	helper := filepath.Join(dir, "helper")
	// -trimpath: the binary, and so the cached rootfs's name, must not depend on the temp dir.
	build := exec.Command(goBin, "build", "-trimpath", "-o", helper, "main.go")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build helper: %v\n%s", err, out)
	}

	b := e2e.NewBundle(t, e2e.Rootfs(t, map[string]string{"e2e-helper": helper}), e2e.BundleOptions{
		Args:     []string{"e2e-helper", "one", "two"},
		Hostname: "helper-host",
	})
	if err := r.Run("e2e-helper", b); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitStatus("e2e-helper", specs.StateStopped, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(b.StdoutPath())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "helper on helper-host: [one two]"; got != want {
		t.Errorf("helper printed %q, want %q", got, want)
	}
	if err := r.Delete("e2e-helper", false); err != nil {
		t.Fatal(err)
	}
}
