package wrapper

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args string // split on spaces
		want Command
		err  bool // Err set: the wrapper does nothing of its own
	}{
		{"runc create", "create --bundle /b c1", Command{Name: "create", ContainerID: "c1", Bundle: "/b"}, false},
		{"bundle =", "create --bundle=/b c1", Command{Name: "create", ContainerID: "c1", Bundle: "/b"}, false},
		{"short bundle", "create -b /b c1", Command{Name: "create", ContainerID: "c1", Bundle: "/b"}, false},
		{"single-dash long (urfave)", "-root /r create -bundle /b c1", Command{Name: "create", ContainerID: "c1", Bundle: "/b"}, false},
		{"argp attached", "create -b/b c1", Command{Name: "create", ContainerID: "c1", Bundle: "/b"}, false},
		{"no bundle: the working directory", "run -d c1", Command{Name: "run", ContainerID: "c1"}, false},
		// containerd's shim: the order of containerd/go-runc's args(), Create and Exec, read
		// in its source, with the flags a shim may add (real engines' lines are in testdata, below).
		{"containerd shim create", "--root /run/containerd/runc/k8s.io --log /x/log.json --log-format json --systemd-cgroup --rootless=false create --bundle /x --pid-file /x/init.pid --console-socket /tmp/s c1",
			Command{Name: "create", ContainerID: "c1", Bundle: "/x"}, false},
		{"containerd shim exec", "--root /run/containerd/runc/k8s.io --log /x/log.json --log-format json exec --process /tmp/p.json --detach --pid-file /x/p.pid c1",
			Command{Name: "exec", ContainerID: "c1"}, false},
		// conmon with runtime flags of a CRI-O handler's runtime_config_path, `=` forms.
		{"conmon create", "--systemd-cgroup --root=/run/runc create --bundle /o/b --pid-file /o/pidfile --no-pivot --no-new-keyring c1",
			Command{Name: "create", ContainerID: "c1", Bundle: "/o/b"}, false},
		{"conmon exec", "--root=/run/runc exec -d --pid-file /o/p --process /o/proc.json --tty c1",
			Command{Name: "exec", ContainerID: "c1"}, false},
		{"exec command after id keeps its flags", "exec -e A=1 -u 0 c1 sh -c --bundle",
			Command{Name: "exec", ContainerID: "c1"}, false},
		{"exec --", "exec -t -- c1 ls", Command{Name: "exec", ContainerID: "c1"}, false},
		{"exec cluster", "exec -dt c1 ls", Command{Name: "exec", ContainerID: "c1"}, false},
		{"crun config", "run -f other.json --bundle /b c1", Command{Name: "run", ContainerID: "c1", Bundle: "/b", ConfigFile: "other.json"}, false},
		{"crun id before flags", "create c1 --bundle /b", Command{Name: "create", ContainerID: "c1", Bundle: "/b"}, false},
		{"other command", "--root /r delete --force c1", Command{Name: "delete"}, false},
		{"state", "state c1", Command{Name: "state"}, false},
		{"version", "--version", Command{}, false},
		{"global help", "--help", Command{Help: true}, false},
		{"help", "create --help", Command{Name: "create", Help: true}, false},
		{"unknown attached global is skipped", "--future=x create --bundle /b c1", Command{Name: "create", ContainerID: "c1", Bundle: "/b", Unknown: []string{"--future=x"}}, false},
		{"unknown bare global before create is a boolean", "--future create c1", Command{Name: "create", ContainerID: "c1", Unknown: []string{"--future"}}, false},
		// A flag neither runtime has is read both ways; where one reading makes sense, or all
		// that do agree, that is the line (the flag named in Unknown), else Err says so.
		{"unknown global: command v or create", "--future v create c1", Command{}, true},
		{"unknown global before a command not acted on", "--future v state c1", Command{}, false},
		{"unknown create flag takes a value: one id", "create --future /b c1", Command{Name: "create", ContainerID: "c1", Unknown: []string{"--future"}}, false},
		{"unknown create flag is a boolean: one id", "create --future --bundle /b c1", Command{Name: "create", ContainerID: "c1", Bundle: "/b", Unknown: []string{"--future"}}, false},
		{"unknown short create flag", "create -X /b --bundle /c c1", Command{Name: "create", ContainerID: "c1", Bundle: "/c", Unknown: []string{"-X"}}, false},
		{"unknown create flags, three", "create --p x --q --bundle /b c1 --r", Command{Name: "create", ContainerID: "c1", Bundle: "/b", Unknown: []string{"--p", "--q", "--r"}}, false},
		{"unknown create flag: bundle or not", "create --future --bundle=/b c1", Command{Name: "create"}, true},
		{"unknown attached create flag", "create --future=1 c1", Command{Name: "create", ContainerID: "c1", Unknown: []string{"--future=1"}}, false},
		{"unknown exec flag: container x or c1", "exec --future x c1 ls", Command{Name: "exec"}, true},
		{"unknown exec flag before the id", "exec --future c1", Command{Name: "exec", ContainerID: "c1", Unknown: []string{"--future"}}, false},
		{"unknown exec flag between known ones", "exec --future -t c1 ls", Command{Name: "exec", ContainerID: "c1", Unknown: []string{"--future"}}, false},
		{"bundle without value", "create c1 --bundle", Command{Name: "create"}, true},
		{"two ids", "create a b", Command{Name: "create"}, true},
		{"no id", "exec", Command{Name: "exec"}, true},
		{"bad id", "exec ../x ls", Command{Name: "exec", ContainerID: "../x"}, true},
		{"empty", "", Command{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := strings.Fields(tc.args)
			got := ParseArgs(args)
			if (got.Err != nil) != tc.err {
				t.Fatalf("ParseArgs(%q).Err = %v, want error: %v", tc.args, got.Err, tc.err)
			}
			if got.Err != nil && !errors.Is(got.Err, ErrUnreadable) {
				t.Errorf("error %v does not wrap ErrUnreadable", got.Err)
			}
			got.Err = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseArgs(%q) = %+v, want %+v", tc.args, got, tc.want)
			}
		})
	}
}

// FuzzParseArgs: whatever the command line, what ParseArgs reports was in it: the command,
// the container and the bundle are arguments (or attached to a flag), a command the wrapper
// acts on comes with a valid id unless it says why not, and the line is never changed.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"create --bundle /b c1", "--root=/r exec -dt c1 ls", "run -b/b -f x.json c1",
		"--systemd-cgroup --log /l create c1 --bundle /b", "exec -- c1", "--future create c1",
		"create --help", "-- create c1", "exec -e", "create -b", "create --future x --bundle /b c1",
		"exec --future x c1 ls", "--future v run c1", "create --p x --q --bundle=/b c1 --r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, " ")
		orig := slices.Clone(args)
		c := ParseArgs(args)
		if !slices.Equal(args, orig) {
			t.Fatalf("ParseArgs changed its input: %q → %q", orig, args)
		}
		if c.Name != "" && !slices.Contains(args, c.Name) {
			t.Errorf("command %q is not an argument of %q", c.Name, line)
		}
		if c.ContainerID != "" && !slices.Contains(args, c.ContainerID) {
			t.Errorf("container %q is not an argument of %q", c.ContainerID, line)
		}
		if c.Bundle != "" && !strings.Contains(line, c.Bundle) {
			t.Errorf("bundle %q is not in %q", c.Bundle, line)
		}
		if acting[c.Name] && c.Err == nil && !c.Help && c.ContainerID == "" {
			t.Errorf("%q: %s with no container and no error", line, c.Name)
		}
		for _, u := range c.Unknown {
			if !slices.Contains(args, u) {
				t.Errorf("unknown flag %q is not an argument of %q", u, line)
			}
		}
		if c.Err != nil && !errors.Is(c.Err, ErrUnreadable) {
			t.Errorf("error %v does not wrap ErrUnreadable", c.Err)
		}
		if again := ParseArgs(args); again.Name != c.Name || again.ContainerID != c.ContainerID || again.Bundle != c.Bundle {
			t.Errorf("not deterministic: %+v then %+v", c, again)
		}
	})
}

// What real engines gave the runtime, recorded (podman by test/e2e's TestWrapperPodman;
// CRI-O and containerd by a script in the runtime's place under real daemons): every create
// is read with a bundle of its container, every exec with a container that was created;
// everything else passes through with no error.
func TestParseArgsCaptured(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		want []string // the commands, in order
	}{
		{"podman-argv.txt", []string{"create", "start", "exec"}},
		{"crio-argv.txt", []string{"", "features", "create", "state", "start", "state", "exec", "exec"}},
		{"containerd-argv.txt", []string{"features", "create", "start", "create", "start", "exec", "exec"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			created := map[string]bool{}
			for line := range strings.Lines(string(b)) {
				if strings.HasPrefix(line, "#") {
					continue
				}
				args := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
				c := ParseArgs(args)
				if c.Err != nil {
					t.Errorf("%q: %v", args, c.Err)
				}
				names = append(names, c.Name)
				switch c.Name {
				case "create":
					if c.ContainerID == "" || !strings.Contains(c.Bundle, c.ContainerID) {
						t.Errorf("create read as %+v: want a bundle of its container", c)
					}
					created[c.ContainerID] = true
				case "exec":
					if !created[c.ContainerID] {
						t.Errorf("exec read as %+v: not a container created before", c)
					}
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("commands %q, want %q", names, tc.want)
			}
		})
	}
}
