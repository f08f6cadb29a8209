package sidecar

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func validConfig() Config {
	return Config{Port: 8888, Proc: "/proc", FlagPath: DefaultFlagPath, FlagFile: DefaultFlagFile,
		MinBackoff: DefaultMinBackoff, MaxBackoff: DefaultMaxBackoff}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := validConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"port", func(c *Config) { c.Port = 70000 }, "port 70000"},
		{"address with a port", func(c *Config) { c.Address = "127.0.0.1:80" }, "holds a port"},
		{"address with a space", func(c *Config) { c.Address = "a b" }, "not a host name"},
		{"relative proc", func(c *Config) { c.Proc = "proc" }, "proc"},
		{"negative pid", func(c *Config) { c.PID = -1 }, "negative"},
		{"pid and name", func(c *Config) { c.PID, c.ContainerName = 1, "app" }, "not both"},
		{"bad name", func(c *Config) { c.ContainerName = "App_1" }, "not a Kubernetes container name"},
		{"relative flag path", func(c *Config) { c.FlagPath = "etc/pid_flag" }, "flag path"},
		{"unclean flag path", func(c *Config) { c.FlagPath = "/etc/../pid_flag" }, "flag path"},
		{"no flag file", func(c *Config) { c.FlagFile = "" }, "no flag file"},
		{"backoff", func(c *Config) { c.MinBackoff, c.MaxBackoff = time.Second, time.Millisecond }, "backoff"},
		{"no backoff", func(c *Config) { c.MinBackoff = 0 }, "backoff"},
	} {
		c := validConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	// Flag files do not matter when the container is given otherwise.
	c := validConfig()
	c.PID, c.FlagPath, c.FlagFile = 7, "", ""
	if err := c.Validate(); err != nil {
		t.Errorf("by pid: %v", err)
	}
	// Every problem at once.
	c = validConfig()
	c.Port, c.PID = -1, -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "port") || !strings.Contains(err.Error(), "pid") {
		t.Errorf("two problems: %v", err)
	}
}

func TestParsePort(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"": DefaultPort, "2333": 2333, "0": 0, "65535": 65535, "08080": 8080} {
		if got, err := ParsePort(in); err != nil || got != want {
			t.Errorf("ParsePort(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"65536", "-1", "+80", " 80", "80 ", "0x50", "eighty", "1e3", "999999"} {
		if got, err := ParsePort(in); err == nil {
			t.Errorf("ParsePort(%q) = %d, want an error", in, got)
		}
	}
}

// FuzzParsePort: an accepted PORT is a port number and says the same in decimal.
func FuzzParsePort(f *testing.F) {
	for _, s := range []string{"", "2333", "65536", "-1", "0x50", "00080"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParsePort(s)
		if err != nil {
			return
		}
		if n < 0 || n > 65535 {
			t.Fatalf("ParsePort(%q) = %d", s, n)
		}
		if s == "" {
			if n != DefaultPort {
				t.Fatalf("empty PORT gave %d", n)
			}
			return
		}
		if strings.TrimLeft(s, "0") != strings.TrimLeft(strconv.Itoa(n), "0") {
			t.Fatalf("ParsePort(%q) = %d", s, n)
		}
	})
}

func TestReadFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{"ok": "stress-ng-1\n", "blank": " \n\t", "long": strings.Repeat("x", maxFlagSize+1)}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := readFlag(filepath.Join(dir, "ok")); err != nil || got != "stress-ng-1" {
		t.Errorf("ok: %q, %v", got, err)
	}
	for name, want := range map[string]string{"blank": "blank", "long": "longer", "missing": "no such file"} {
		if _, err := readFlag(filepath.Join(dir, name)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}
