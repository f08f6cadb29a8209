// Command licenses writes the license files of every module linked into the packages it is
// given (`make licenses`: the four shipped binaries), from the module graph:
//
//	licenses [-tags TAGS] -o DIR PACKAGE...
//
// DIR gets the main module's license files at its root, each dependency's LICENSE*,
// LICENCE*, COPYING*, NOTICE* and PATENTS* files in DIR/<module path>/, the Go toolchain's in
// DIR/std/, and modules.txt naming each module and version. A module with none of those
// files fails the run, by name: shipping it would ship code without its terms. It reads
// `go list -deps` with the build's tags and environment (CGO_ENABLED, GOOS, GOARCH), so
// the modules are those the build links, and only the module cache (no network). A
// release tool, never installed.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// options is the parsed command line.
type options struct {
	out      string
	tags     string
	packages []string
}

// parseArgs parses the command line apart from running it.
func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("licenses", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "o", "", "the directory to write (replaced whole)")
	fs.StringVar(&o.tags, "tags", "", "build tags, as the build passes them to go build")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("parse arguments: %w", err)
	}
	o.packages = fs.Args()
	if o.out == "" {
		return o, errors.New("-o DIR is required")
	}
	if len(o.packages) == 0 {
		return o, errors.New("name the packages of the shipped binaries, e.g. ./hooks/resctrl-mon-hook ./cmd/resctrl-mon")
	}
	return o, nil
}

func main() {
	o, err := parseArgs(os.Args[1:], os.Stderr)
	if err == nil {
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "licenses:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	args := []string{"list", "-deps", "-f", listFormat}
	if o.tags != "" {
		args = append(args, "-tags", o.tags)
	}
	out, err := goCmd(append(args, o.packages...)...)
	if err != nil {
		return err
	}
	mods, err := parseModules(bytes.NewReader(out))
	if err != nil {
		return err
	}
	goroot, err := goCmd("env", "GOROOT")
	if err != nil {
		return err
	}
	version, err := goCmd("env", "GOVERSION")
	if err != nil {
		return err
	}
	if err := writeTree(o.out, mods, strings.TrimSpace(string(goroot)), strings.TrimSpace(string(version))); err != nil {
		return err
	}
	deps := 0
	for _, m := range mods {
		if !m.Main {
			deps++
		}
	}
	fmt.Printf("%s: the licenses of this module, %d dependencies and the Go toolchain\n", o.out, deps)
	return nil
}

// goCmd runs the go command and returns its standard output; its standard error is in the error.
func goCmd(args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
