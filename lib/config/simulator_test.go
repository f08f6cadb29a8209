package config

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resctrlSimulator, the one boolean key, is off by default and set like every scalar key:
// from the file, the environment or a flag; a value that is no boolean names the key.
func TestResctrlSimulatorKey(t *testing.T) {
	t.Parallel()
	if Default().ResctrlSimulator {
		t.Fatal("the simulator is allowed by default")
	}
	for _, tc := range []struct {
		name, file string
		env        []string
		args       []string
		want       bool
		wantErr    string
	}{
		{name: "default", want: false},
		{name: "file", file: "resctrlSimulator: true\n", want: true},
		{name: "environment", env: []string{"RESCTRL_MON_RESCTRL_SIMULATOR=true"}, want: true},
		{name: "flag", args: []string{"--resctrlSimulator=true"}, want: true},
		{name: "flag over file", file: "resctrlSimulator: true\n", args: []string{"--resctrlSimulator", "false"}, want: false},
		{name: "bad environment", env: []string{"RESCTRL_MON_RESCTRL_SIMULATOR=yes please"}, wantErr: `"resctrlSimulator"`},
		{name: "bad flag", args: []string{"--resctrlSimulator=maybe"}, wantErr: `"resctrlSimulator"`},
		{name: "bad file", file: "resctrlSimulator: maybe\n", wantErr: "resctrlSimulator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Always a file: none would be the host's /etc/resctrl-mon/config.yaml.
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			flags := BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			c, err := Resolve(path, tc.env, flags.Given())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || c.ResctrlSimulator != tc.want {
				t.Errorf("resctrlSimulator %v, %v; want %v", c.ResctrlSimulator, err, tc.want)
			}
		})
	}
}
