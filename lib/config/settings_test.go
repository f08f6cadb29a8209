package config

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// Every key the file accepts is in Settings, once, and nothing else is: a key added to Config
// without a meaning would reach --help and the reference with none.
func TestSettingsNameEveryKey(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Default())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var want []string
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			for sk := range maps.Keys(sub) {
				want = append(want, k+"."+sk)
			}
			continue
		}
		want = append(want, k)
	}
	var got []string
	for _, s := range Settings() {
		if s.Meaning == "" || strings.Contains(s.Meaning, "`") {
			t.Errorf("setting %s: meaning %q is empty or has a backtick (urfave/cli takes it for a placeholder)", s.Key, s.Meaning)
		}
		got = append(got, s.Key)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("config.Settings has the keys\n %q\nthe file has\n %q\n(give each key a Setting in settings.go: its meaning is its --help and its row in docs/reference/config.md; then run make docs)", got, want)
	}
}

func TestSettingEnvAndDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, env, def string }{
		{"resctrlRoot", "RESCTRL_MON_RESCTRL_ROOT", "/sys/fs/resctrl"},
		{"retention", "RESCTRL_MON_RETENTION", "5m"},
		{"snapshotMaxAge", "RESCTRL_MON_SNAPSHOT_MAX_AGE", "24h"},
		{"hookBudget", "RESCTRL_MON_HOOK_BUDGET", "8s"},
		{"mbmAssignment", "RESCTRL_MON_MBM_ASSIGNMENT", "kernel"},
		{"mbmAssignmentHold", "RESCTRL_MON_MBM_ASSIGNMENT_HOLD", "5m"},
		{"snapshotMaxCount", "RESCTRL_MON_SNAPSHOT_MAX_COUNT", "10000"},
		{"podSelector", "RESCTRL_MON_POD_SELECTOR", `""`},
		{"namespaces.include", "", ""},
		{"annotations.optOut", "", "resctrl-mon.io/disable"},
		{"runtimeRoots", "", "/run/runc, /run/containerd/runc/*, /run/crun"},
	} {
		s := Setting{Key: tc.key}
		if s.Env() != tc.env || s.Default() != tc.def {
			t.Errorf("%s: env %q default %q, want %q %q", tc.key, s.Env(), s.Default(), tc.env, tc.def)
		}
	}
	for in, want := range map[string]string{"5m0s": "5m", "24h0m0s": "24h", "30s": "30s", "1h30m0s": "1h30m", "1m30s": "1m30s", "x0s": "x0s"} {
		if got := shortDuration(in); got != want {
			t.Errorf("shortDuration(%q) = %q, want %q", in, got, want)
		}
	}
}
