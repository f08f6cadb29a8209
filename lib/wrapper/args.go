package wrapper

import (
	"errors"
	"fmt"
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
)

// Command is what the wrapper needs to know of a runtime's command line. Nothing else of it
// is read: the real runtime gets the command line exactly as given.
type Command struct {
	// Name is the runtime command ("create", "run", "exec", "state", ...); "" when there is
	// none (`runc --version`) or the global flags could not be read.
	Name string
	// ContainerID is the container of create, run and exec.
	ContainerID string
	// Bundle is create's and run's --bundle as given; "" means the working directory.
	Bundle string
	// ConfigFile is crun's --config (-f), relative to the bundle; "" means config.json.
	ConfigFile string
	// Help is set when the runtime was asked for help: it runs no container.
	Help bool
	// Err says why a create, run or exec line could not be read for sure (a flag neither
	// runc nor crun has, so whether it takes a value is unknown): the wrapper then does
	// nothing of its own rather than act on the wrong bundle or container.
	Err error
}

// ErrUnreadable is wrapped by Command.Err.
var ErrUnreadable = errors.New("command line not understood")

// flagSet lists the flags of one level, by name without dashes: value flags take an
// argument (`--root DIR`, `--root=DIR`, `-b DIR`, `-bDIR`), the others never do.
type flagSet struct{ value, boolean map[string]bool }

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// The flags of runc 1.1–1.3 (urfave/cli: `-x` and `--x` alike, `=` or the next argument)
// and crun 1.8+ (argp: `--x=V`, `-xV`, clustered short flags), from their --help.
var (
	globalFlags = flagSet{
		value:   set("root", "log", "log-format", "log-level", "criu", "rootless", "cgroup-manager"),
		boolean: set("debug", "systemd-cgroup", "help", "h", "?", "usage", "version", "v", "V"),
	}
	createFlags = flagSet{
		value: set("bundle", "b", "console-socket", "pid-file", "preserve-fds", "config", "f"),
		boolean: set("no-pivot", "no-new-keyring", "no-subreaper", "detach", "d", "keep",
			"help", "h", "?", "usage"),
	}
	execFlags = flagSet{
		value: set("console-socket", "cwd", "env", "e", "user", "u", "additional-gids", "g",
			"process", "p", "pid-file", "process-label", "apparmor", "cap", "c", "preserve-fds", "cgroup"),
		boolean: set("tty", "t", "detach", "d", "no-new-privs", "ignore-paused", "help", "h", "?", "usage"),
	}
)

// acting are the commands the wrapper does something for; an unknown flag followed by one of
// them is taken for a boolean (a value that happens to be "create" is far less likely than a
// new boolean flag of a newer runtime).
var acting = set("create", "run", "exec")

// ParseArgs reads a runtime command line (without argv[0]). It never fails: what it cannot
// read is said in Err, and the caller passes the line on untouched either way.
func ParseArgs(args []string) Command {
	var c Command
	i, err := scanGlobal(args, &c)
	if err != nil || c.Name == "" {
		c.Err = err
		return c
	}
	rest := args[i+1:]
	switch c.Name {
	case "create", "run":
		c.Err = scanCreate(rest, &c)
	case "exec":
		c.Err = scanExec(rest, &c)
	}
	if c.Err == nil && !c.Help && acting[c.Name] && !ocistate.ValidContainerID(c.ContainerID) {
		c.Err = fmt.Errorf("%w: %s: container id %q is not a valid id", ErrUnreadable, c.Name, clip.String(c.ContainerID))
	}
	return c
}

// scanGlobal reads the global flags up to the command and returns the command's index.
func scanGlobal(args []string, c *Command) (int, error) {
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			if i+1 < len(args) {
				c.Name = args[i+1]
				return i + 1, nil
			}
			return i, nil
		}
		if !isFlag(tok) {
			c.Name = tok
			return i, nil
		}
		f, err := readFlag(tok, globalFlags)
		if err != nil {
			// An unknown flag that carries its value (--x=v) is skipped; one followed by an
			// acting command is taken for a boolean.
			if f.attached || (i+1 < len(args) && acting[args[i+1]]) {
				continue
			}
			return i, fmt.Errorf("%w: global flag %q", ErrUnreadable, tok)
		}
		if f.needsNext {
			i++
		}
		if f.help {
			c.Help = true
		}
	}
	return len(args), nil
}

// scanCreate reads create's and run's flags, which crun (argp) accepts before and after the
// container id alike.
func scanCreate(args []string, c *Command) error {
	var ids []string
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			ids = append(ids, args[i+1:]...)
			break
		}
		if !isFlag(tok) {
			ids = append(ids, tok)
			continue
		}
		f, err := readFlag(tok, createFlags)
		if err != nil && f.attached {
			continue // --x=v: whatever it is, it carries its value
		}
		if err != nil {
			return fmt.Errorf("%w: %s flag %q", ErrUnreadable, c.Name, tok)
		}
		if f.needsNext {
			if i+1 >= len(args) {
				return fmt.Errorf("%w: %s flag %q has no value", ErrUnreadable, c.Name, tok)
			}
			i++
			f.value = args[i]
		}
		switch f.name {
		case "bundle", "b":
			c.Bundle = f.value
		case "config", "f":
			c.ConfigFile = f.value
		}
		c.Help = c.Help || f.help
	}
	if len(ids) != 1 {
		if c.Help {
			return nil
		}
		return fmt.Errorf("%w: %s wants one container id, got %q", ErrUnreadable, c.Name, ids)
	}
	c.ContainerID = ids[0]
	return nil
}

// scanExec reads exec's flags up to the container id; what follows is the process to run.
func scanExec(args []string, c *Command) error {
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			if i+1 < len(args) {
				c.ContainerID = args[i+1]
			}
			break
		}
		if !isFlag(tok) {
			c.ContainerID = tok
			break
		}
		f, err := readFlag(tok, execFlags)
		if err != nil && f.attached {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: exec flag %q", ErrUnreadable, tok)
		}
		if f.needsNext {
			i++
		}
		c.Help = c.Help || f.help
	}
	if c.ContainerID == "" && !c.Help {
		return fmt.Errorf("%w: exec names no container", ErrUnreadable)
	}
	return nil
}

func isFlag(tok string) bool { return len(tok) > 1 && tok[0] == '-' }

// flag is one flag token read.
type flag struct {
	name      string
	value     string
	attached  bool // the value (or "=...") is in the token itself
	needsNext bool // the value is the next argument
	help      bool
}

// readFlag reads one token that starts with a dash. An error means a flag the set does not
// know (f.attached still tells whether the token carried its own value).
func readFlag(tok string, fs flagSet) (flag, error) {
	long := strings.HasPrefix(tok, "--")
	body := strings.TrimLeft(tok, "-")
	name, value, hasEq := strings.Cut(body, "=")
	f := flag{name: name, value: value, attached: hasEq}
	switch {
	case fs.value[name]:
		f.needsNext = !hasEq
	case fs.boolean[name]:
	case !long && !hasEq && len(name) > 1:
		// argp: clustered short flags (-dt) or a short flag with its value attached (-bDIR).
		return readCluster(name, fs)
	default:
		return f, fmt.Errorf("unknown flag %q", tok)
	}
	f.help = isHelp(name)
	return f, nil
}

// readCluster reads "-dt" or "-bDIR" (argp); a letter it does not know makes the token
// unknown.
func readCluster(letters string, fs flagSet) (flag, error) {
	for j := 0; j < len(letters); j++ {
		l := letters[j : j+1]
		switch {
		case fs.value[l]:
			f := flag{name: l, value: letters[j+1:], attached: true}
			f.needsNext = f.value == ""
			f.attached = !f.needsNext
			return f, nil
		case fs.boolean[l]:
		default:
			// Whether the unknown letter takes the next argument is unknown too.
			return flag{}, fmt.Errorf("unknown short flag %q in -%s", l, letters)
		}
	}
	return flag{name: letters, attached: true, help: strings.ContainsAny(letters, "h?")}, nil
}

func isHelp(name string) bool { return name == "help" || name == "h" || name == "?" || name == "usage" }
