// Package registrytest runs a real OCI registry for tests: Debian's docker-registry (the
// CNCF distribution registry) on a free loopback port, plain HTTP, storage in a temporary
// directory. Images go in with skopeo (or a runtime's pull), charts with helm push
// --plain-http; nothing leaves the machine.
package registrytest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary is the registry Debian's docker-registry package installs.
const Binary = "/usr/bin/docker-registry"

// startTimeout bounds the wait for the registry's first answer on /v2/.
const startTimeout = 30 * time.Second

// Registry is one running registry.
type Registry struct {
	// Addr is "127.0.0.1:PORT": what image references and oci:// URLs name.
	Addr string
	// Dir is the registry's storage (its filesystem driver's root).
	Dir string

	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
	err  error // cmd.Wait's, once done is closed
}

// Start runs a registry until the test ends; at cleanup it is stopped and waited for. A
// missing binary skips the test, or fails it under RESCTRLSIM_REQUIRE=1.
func Start(t testing.TB) *Registry {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		skipOrFail(t, "registrytest: %s: %v (Debian package docker-registry; make deps installs it)", Binary, err)
	}
	dir := t.TempDir()
	// The port is free when picked and taken by the registry a moment later: another process
	// may take it between. A bind failure is retried once, on a fresh port.
	var errs []error
	for try := 0; try < 2; try++ {
		r, err := start(dir)
		if err == nil {
			t.Cleanup(func() {
				if err := r.stop(); err != nil {
					t.Errorf("registrytest: %v", err)
				}
			})
			return r
		}
		errs = append(errs, err)
		if !errors.Is(err, errBind) {
			break
		}
	}
	t.Fatalf("registrytest: %v", errors.Join(errs...))
	return nil
}

// URL is the registry's base URL, e.g. for GET URL()+"/v2/_catalog".
func (r *Registry) URL() string { return "http://" + r.Addr }

// Log is what the registry printed so far.
func (r *Registry) Log() string { return r.log.String() }

// errBind is a registry that could not listen on the port it was given.
var errBind = errors.New("the port was taken")

func start(root string) (*Registry, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &Registry{Addr: "127.0.0.1:" + strconv.Itoa(port), Dir: filepath.Join(root, "storage"), log: &syncBuffer{}, done: make(chan struct{})}
	config := filepath.Join(root, "config-"+strconv.Itoa(port)+".yml")
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	if err := os.WriteFile(config, []byte(configYAML(r.Addr, r.Dir, hex.EncodeToString(secret))), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", config, err)
	}
	r.cmd = exec.Command(Binary, "serve", config)
	r.cmd.Env = registryEnv(os.Environ())
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", Binary, err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	if err := r.waitReady(); err != nil {
		_ = r.stop()
		if strings.Contains(r.Log(), "address already in use") {
			return nil, fmt.Errorf("%s: %w: %w", r.Addr, errBind, err)
		}
		return nil, fmt.Errorf("%s on %s: %w\n%s", Binary, r.Addr, err, r.Log())
	}
	return r, nil
}

// configYAML is the registry's config: plain HTTP on addr, storage in dir, deletes allowed
// (a test may remove what it pushed), no upload purging (a background walk of dir) and no
// debug server (another port). secret signs upload state; the registry makes one up, with a
// warning, when there is none.
func configYAML(addr, dir, secret string) string {
	return fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %s
  secret: %s
`, dir, addr, secret)
}

// registryEnv is env without REGISTRY_* variables: the registry reads each as an override
// of its config (REGISTRY_HTTP_ADDR, ...), and the test's config must be the one it runs.
func registryEnv(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "REGISTRY_") {
			out = append(out, e)
		}
	}
	return out
}

// freePort is a loopback TCP port nobody listened on a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	return port, nil
}

// waitReady waits until GET /v2/ answers 200 (the registry's API root: it answers once it
// serves), or the registry exits, or startTimeout passes.
func (r *Registry) waitReady() error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(startTimeout)
	var last error
	for time.Now().Before(deadline) {
		resp, err := client.Get(r.URL() + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /v2/: %s", resp.Status)
		}
		last = err
		select {
		case <-r.done:
			return fmt.Errorf("exited before serving: %w", r.err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("no answer after %v: %w", startTimeout, last)
}

// stop ends the registry (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (r *Registry) stop() error {
	select {
	case <-r.done:
		return nil
	default:
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop the registry on %s: %w", r.Addr, err)
	}
	select {
	case <-r.done:
		return nil
	case <-time.After(10 * time.Second):
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill the registry on %s: %w", r.Addr, err)
	}
	<-r.done
	return fmt.Errorf("the registry on %s ignored SIGTERM for 10 s: killed", r.Addr)
}

// skipOrFail skips a test whose precondition is missing, or fails it with
// RESCTRLSIM_REQUIRE=1 (make test's default): a suite that silently skipped proves nothing.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("RESCTRLSIM_REQUIRE") == "1" {
		t.Fatalf("%s (RESCTRLSIM_REQUIRE=1 forbids skipping)", msg)
	}
	t.Skip(msg)
}

// syncBuffer is the registry's output, written by the process's copier goroutines and read
// by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
