package k8s

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// repoRoot is the checkout this package is in.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// chartDir is the chart under test.
func chartDir(t testing.TB) string {
	return filepath.Join(repoRoot(t), "install", "helm", "resctrl-mon")
}

// cached is the bin directory of a build in the test cache (test/runtimes/NAME.sh), or a
// skip (a failure under RESCTRLSIM_REQUIRE=1): tests never start a build themselves.
func cached(t testing.TB, name string) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(repoRoot(t), "test", "runtimes", name+".sh"), "--print").Output()
	if err != nil {
		e2e.Unavailable(t, "k8s: %s is not in the test cache: run make runtimes", name)
	}
	return strings.TrimSpace(string(out))
}

// helmEnv keeps helm's caches and config out of the home directory.
func helmEnv(dir string) []string {
	return append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(dir, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(dir, "config"),
		"HELM_DATA_HOME="+filepath.Join(dir, "data"))
}
