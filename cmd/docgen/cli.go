package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// binary is one program whose --help the CLI page shows.
type binary struct {
	Name, Pkg string
	Help      string
	Commands  []command // resctrl-mon's subcommands, each with its own --help
}

type command struct{ Name, Help string }

// cliBinaries are the programs with a command line of their own. The runtime wrapper,
// resctrl-mon-runtime, has none (every argument is the real runtime's): the page says so.
var cliBinaries = []binary{
	{Name: "resctrl-mon", Pkg: "./cmd/resctrl-mon"},
	{Name: "resctrl-mon-hook", Pkg: "./hooks/resctrl-mon-hook"},
	{Name: "resctrl-mon-nri", Pkg: "./nri-adapter/resctrl-mon-nri"},
}

// cliData builds each binary as `make build` does, without the install's paths (so the
// defaults shown are the code's), and records its --help and each subcommand's.
func cliData(root string) (any, error) {
	tmp, err := os.MkdirTemp("", "docgen-bin-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	// One go build for all: the packages they share compile once, and the links run side by
	// side. Each binary is named for its package's directory, which is its name.
	var pkgs []string
	for _, b := range cliBinaries {
		pkgs = append(pkgs, b.Pkg)
	}
	args := append([]string{"build", "-tags", "urfave_cli_no_docs", "-o", tmp + string(filepath.Separator)}, pkgs...)
	build := exec.Command(goTool(), args...)
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s: %w\n%s", strings.Join(pkgs, " "), err, msg)
	}
	var out []binary
	for _, b := range cliBinaries {
		bin := filepath.Join(tmp, b.Name)
		if b.Help, err = help(bin, "--help"); err != nil {
			return nil, err
		}
		if b.Commands, err = commandHelps(bin, nil, b.Help); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// commandHelps records the --help of every subcommand under path (nil: the program's own),
// and of theirs in turn (resctrl-mon host install), each after its parent.
func commandHelps(bin string, path []string, parentHelp string) ([]command, error) {
	var out []command
	for _, name := range subcommands(parentHelp) {
		args := append(slices.Clone(path), name)
		h, err := help(bin, append(slices.Clone(args), "--help")...)
		if err != nil {
			return nil, err
		}
		out = append(out, command{Name: strings.Join(args, " "), Help: h})
		sub, err := commandHelps(bin, args, h)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// help runs bin with args in an empty environment (no RESCTRL_MON_ variable may change what
// it prints) and wants its help on stdout or stderr, and success.
func help(bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{}
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, b.String())
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// subcommands reads the names under urfave/cli's "COMMANDS:" heading, its own help command
// left out; a program without subcommands has none.
func subcommands(help string) []string {
	_, rest, ok := strings.Cut(help, "\nCOMMANDS:\n")
	if !ok {
		return nil
	}
	rest, _, _ = strings.Cut(rest, "\n\n")
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "help," || f[0] == "help" {
			continue
		}
		out = append(out, strings.TrimSuffix(f[0], ","))
	}
	return out
}

// goTool is the go command on PATH, else the one the project's Makefile puts there.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}
