package sysfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWriteAtomicAt(t *testing.T) {
	t.Parallel()
	dot := func(name string, draw uint32) string { return "." + name + ".part" }
	tests := []struct {
		name     string
		o        Atomic
		byFD     bool                           // through an open directory, not AT_FDCWD
		before   func(t *testing.T, dir string) // what is at the name before
		wantMode fs.FileMode                    // 0: no file expected
		wantErr  error
	}{
		{name: "zero value: 0600", wantMode: 0o600},
		// 0666 is what the create alone would not give under the usual umask (022).
		{name: "a mode whatever the umask", o: Atomic{Mode: 0o666}, wantMode: 0o666},
		{name: "durable, by path", o: Atomic{Mode: 0o644, Durable: true}, wantMode: 0o644},
		{name: "durable, by dir fd", o: Atomic{Mode: 0o644, Durable: true}, byFD: true, wantMode: 0o644},
		{name: "own temp name", o: Atomic{TempName: dot}, byFD: true, wantMode: 0o600},
		{name: "a link at the name is replaced, not followed", wantMode: 0o600, before: func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(dir, "target"), filepath.Join(dir, "f")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a directory at the name: error, no temp left", wantErr: unix.EISDIR, before: func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "f"), 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.before != nil {
				tt.before(t, dir)
			}
			dirfd := unix.AT_FDCWD
			if tt.byFD {
				fd, err := Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = unix.Close(fd) }()
				dirfd = fd
			}
			for _, text := range []string{"first", "second, longer"} {
				err := WriteAtomicAt(dirfd, dir, "f", []byte(text), tt.o)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), filepath.Join(dir, "f")) {
						t.Errorf("got %v, want %v naming the file", err, tt.wantErr)
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(filepath.Join(dir, "f")); string(b) != text || err != nil {
					t.Errorf("got %q, %v; want %q", b, err, text)
				}
			}
			if tt.wantMode != 0 {
				fi, err := os.Lstat(filepath.Join(dir, "f"))
				if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != tt.wantMode {
					t.Errorf("file: %v, %v; want a regular file mode %v", fi, err, tt.wantMode)
				}
			}
			es, _ := os.ReadDir(dir)
			for _, e := range es {
				if e.Name() != "f" && e.Name() != "target" {
					t.Errorf("left beside it: %s", e.Name())
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, "target")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("written through the link: %v", err)
			}
		})
	}
}

func TestTempNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		got, want string
	}{
		{StateTemp("pod.json", 7), ".tmp-pod.json-7"},
		{StateTemp("c1", 4294967295), ".tmp-c1-4294967295"},
		{HiddenTemp("g.end", 0), ".g.end.tmp-0"},
		{HiddenTemp("x.json", 12), ".x.json.tmp-12"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// A temporary name taken (a concurrent writer's, or a crashed one's) is drawn again.
func TestWriteAtomicAtDrawsAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".f.taken"), []byte("other"), 0o600); err != nil {
		t.Fatal(err)
	}
	draws := 0
	name := func(n string, _ uint32) string {
		draws++
		if draws == 1 {
			return "." + n + ".taken"
		}
		return "." + n + ".free"
	}
	if err := WriteAtomicAt(unix.AT_FDCWD, dir, "f", []byte("x"), Atomic{TempName: name}); err != nil || draws != 2 {
		t.Fatalf("%v after %d draws", err, draws)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".f.taken")); string(b) != "other" {
		t.Errorf("the taken temp file was changed: %q", b)
	}
}

func TestWriteAtomicAtOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	dir := t.TempDir()
	if err := WriteAtomicAt(unix.AT_FDCWD, dir, "f", []byte("x"), Atomic{Owner: &Owner{UID: 1234, GID: 5678}}); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(dir, "f"), &st); err != nil || st.Uid != 1234 || st.Gid != 5678 {
		t.Errorf("owner %d:%d, %v; want 1234:5678", st.Uid, st.Gid, err)
	}
}
