package k8s

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// denyRule is one `deny PATH PERMS,` line of an AppArmor profile.
type denyRule struct {
	glob  string // as written, for messages
	re    *regexp.Regexp
	perms string // r, w, k, l, x, ...
}

// aaVars are the profile variables the runtimes' templates use (tunables/global's values).
var aaVars = strings.NewReplacer("@{PROC}", "/proc/")

// aaGlob is an AppArmor path glob as a regexp: `**` any characters, `*` and `?` any within one
// path component, `[...]`/`[^...]` a character class, `{a,b}` alternatives. A negated class
// is let match "/" too (apparmor_parser does not exclude it; it only makes a rule deny more,
// so a path this finds allowed is allowed). Repeated slashes are one, as AppArmor folds them.
func aaGlob(glob string) (*regexp.Regexp, error) {
	glob = regexp.MustCompile(`/+`).ReplaceAllString(aaVars.Replace(glob), "/")
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			if i+1 < len(glob) && glob[i+1] == '*' {
				b.WriteString(".*")
				i++
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			end := strings.IndexByte(glob[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("glob %q: [ without ]", glob)
			}
			b.WriteString(glob[i : i+end+1])
			i += end
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth == 0 {
				return nil, fmt.Errorf("glob %q: } without {", glob)
			}
			depth--
			b.WriteString(")")
		case ',':
			if depth == 0 {
				return nil, fmt.Errorf("glob %q: , outside {}", glob)
			}
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("glob %q: { without }", glob)
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// parseDenyRules reads the file rules among a profile's deny lines (a fixture copied from a
// runtime's template); `deny mount,` and other non-file rules are left out.
func parseDenyRules(path string) ([]denyRule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var rules []denyRule
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ","))
		if len(fields) == 0 || fields[0] != "deny" || len(fields) < 3 || !strings.HasPrefix(fields[1], "/") && !strings.HasPrefix(fields[1], "@") {
			continue
		}
		re, err := aaGlob(fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		rules = append(rules, denyRule{glob: fields[1], re: re, perms: fields[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%s: no deny file rules", path)
	}
	return rules, nil
}

// denied is the first rule that denies perm on path, or "".
func denied(rules []denyRule, path string, perm byte) string {
	for _, r := range rules {
		if strings.IndexByte(r.perms, perm) >= 0 && r.re.MatchString(path) {
			return r.glob
		}
	}
	return ""
}

func TestChartAppArmorGlob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"/sys/fs/[^c]*/**", "/sys/fs/resctrl/mon_groups/x/tasks", true},
		{"/sys/fs/[^c]*/**", "/sys/fs/resctrl/", true},
		{"/sys/fs/[^c]*/**", "/sys/fs/cgroup/x", false},
		{"/sys/fs/cg[^r]*/**", "/sys/fs/cgroup/x", false},
		{"/sys/[^f]*/**", "/sys/kernel/x", true},
		{"/sys/[^f]*/**", "/host/sys/kernel/x", false},
		{"/sys/fs/[^c]*/**", "/host/sys/fs/resctrl/tasks", false},
		{"@{PROC}/*", "/proc/sysrq-trigger", true},
		{"@{PROC}/*", "/proc/1/stat", false},
		{"@{PROC}/sys/kernel/{?,??,[^s][^h][^m]**}", "/proc/sys/kernel/shmmax", false},
		{"@{PROC}/sys/kernel/{?,??,[^s][^h][^m]**}", "/proc/sys/kernel/panic", true},
		{"/a/{b,c{d,e}}/f", "/a/ce/f", true},
		{"/a/{b,c{d,e}}/f", "/a/cf/f", false},
		{"/a/?", "/a/b", true},
		{"/a/?", "/a/bc", false},
		{"/a//b", "/a/b", true},
	} {
		re, err := aaGlob(tc.glob)
		if err != nil {
			t.Errorf("%s: %v", tc.glob, err)
			continue
		}
		if got := re.MatchString(tc.path); got != tc.want {
			t.Errorf("%s matches %s: %t, want %t (regexp %s)", tc.glob, tc.path, got, tc.want, re)
		}
	}
	for _, bad := range []string{"/a/[b", "/a/{b", "/a/b}", "/a,b"} {
		if _, err := aaGlob(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// written are the paths a container with these mounts writes: below each writable mount, and
// for the resctrl mount the files resctrl-mon writes there (a group made and removed, its
// tasks, its counter assignments; a class's group too).
func written(c any, resctrl string) []string {
	var paths []string
	for _, m := range list(c, "volumeMounts") {
		if get(m, "readOnly") == true {
			continue
		}
		at := fmt.Sprint(get(m, "mountPath"))
		if at != resctrl {
			paths = append(paths, at+"/x", at+"/x/y")
			continue
		}
		for _, p := range []string{"mon_groups/0f0e0d0c-0b0a-0908-0706-050403020100/", "mon_groups/0f0e0d0c-0b0a-0908-0706-050403020100/tasks",
			"mon_groups/0f0e0d0c-0b0a-0908-0706-050403020100/mbm_L3_assignments", "cls/mon_groups/p/", "cls/mon_groups/p/tasks"} {
			paths = append(paths, at+"/"+p)
		}
	}
	return paths
}

// The runtimes' default AppArmor profiles (containerd's, and containers/common's for CRI-O and
// podman) deny writes below /sys/fs/[^c]*: a confined container cannot write /sys/fs/resctrl,
// whatever its capabilities. The chart mounts resctrl where none of their rules reach, points
// the pod's config there, and no container writes anywhere they deny.
func TestChartAppArmorDefaultProfiles(t *testing.T) {
	t.Parallel()
	profiles := map[string][]denyRule{}
	for _, f := range []string{"containerd.deny", "containers-common.deny"} {
		rules, err := parseDenyRules(filepath.Join("testdata", "apparmor", f))
		if err != nil {
			t.Fatal(err)
		}
		profiles[f] = rules
		// What the chart did before: resctrl at the node's path in the container. Denied,
		// or this test could not see the fault it is for.
		for _, p := range []string{"/sys/fs/resctrl/mon_groups/x/tasks", "/sys/fs/resctrl/mon_groups/x/"} {
			if denied(rules, p, 'w') == "" {
				t.Errorf("%s: writing %s is not denied: the fixture or the matcher is wrong", f, p)
			}
		}
	}
	for _, set := range [][]string{{"mode=nri"}, {"mode=hooks"}, {"mode=nri", "wrapper.enabled=true"}, {"mode=hooks", "config.resctrlRoot=/mnt/resctrl"}} {
		objs := render(t, set...)
		cfg, err := config.Parse(strings.NewReader(fmt.Sprint(get(releaseConfig(t, objs), "data", "config.yaml"))))
		if err != nil {
			t.Fatalf("%v: config.yaml: %v", set, err)
		}
		spec := get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
		for _, c := range append(list(spec, "initContainers"), list(spec, "containers")...) {
			if m := mountAt(c, cfg.ResctrlRoot); m == nil && get(c, "name") != "install-hooks" {
				t.Errorf("%v: %s does not mount resctrl where the pod's config says (%s)", set, get(c, "name"), cfg.ResctrlRoot)
			}
		}
		// Every container of every workload the chart renders (the uninstall cleanup too).
		var wrote []string
		for key, o := range objs {
			kind, _, _ := strings.Cut(key, "/")
			if kind != "DaemonSet" && kind != "Job" {
				continue
			}
			spec := get(o, "spec", "template", "spec")
			for _, c := range append(list(spec, "initContainers"), list(spec, "containers")...) {
				for _, p := range written(c, cfg.ResctrlRoot) {
					wrote = append(wrote, p)
					for f, rules := range profiles {
						if r := denied(rules, p, 'w'); r != "" {
							t.Errorf("%v: %s %s writes %s, which %s denies (deny %s w)", set, key, get(c, "name"), p, f, r)
						}
					}
				}
			}
		}
		if !strings.Contains(strings.Join(wrote, " "), cfg.ResctrlRoot+"/mon_groups/") {
			t.Errorf("%v: no container writes resctrl (%s): %q", set, cfg.ResctrlRoot, wrote)
		}
	}
}

// The profile shipped for appArmorProfile.type=Localhost compiles with the AppArmor of the
// distributions we support (Debian 12's apparmor_parser 3.0; parse and compile only: this
// kernel has no AppArmor to load it into), and the chart names it.
func TestChartAppArmorProfile(t *testing.T) {
	t.Parallel()
	parser, err := exec.LookPath("apparmor_parser")
	if err != nil {
		e2e.Unavailable(t, "apparmor_parser not installed (Debian package apparmor; test/deps.sh)")
	}
	profile := filepath.Join(repoRoot(t), "install", "apparmor", "resctrl-mon")
	if out, err := exec.Command(parser, "-Q", "-K", profile).CombinedOutput(); err != nil {
		t.Fatalf("apparmor_parser -Q -K %s: %v\n%s", profile, err, out)
	}
	b, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	// It allows writing resctrl where the chart mounts it, and the state dir, by name.
	for _, want := range []string{"profile resctrl-mon ", "/host/sys/fs/resctrl/{,**} rw,", "/run/resctrl-mon/{,**} rwk,"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the profile lacks %q", want)
		}
	}
	objs := render(t, "appArmorProfile.type=Localhost", "appArmorProfile.localhostProfile=resctrl-mon")
	spec := get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	for _, c := range list(spec, "containers") {
		if got := fmt.Sprint(get(c, "securityContext", "appArmorProfile")); got != "map[localhostProfile:resctrl-mon type:Localhost]" {
			t.Errorf("%s: appArmorProfile = %s", get(c, "name"), got)
		}
	}
}
