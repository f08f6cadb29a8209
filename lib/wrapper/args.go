package wrapper

import (
	"errors"
	"fmt"
	"slices"
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
	// Unknown lists the flags neither runc nor crun has that the line was read past (a
	// newer runtime's): they go to the runtime as given, and the wrapper's log names them.
	Unknown []string
	// Err says why a create, run or exec line could not be read for sure (a flag neither
	// runc nor crun has, read both ways, gives two different containers or bundles): the
	// wrapper then does nothing of its own rather than act on the wrong bundle or container.
	// The runtime runs it all the same, whatever the failure policy: a flag the wrapper does
	// not know is no reason to refuse a command.
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
//
// A flag neither runc nor crun has (a newer runtime's) is read both ways, as a boolean and
// as taking the next argument: where every reading that makes sense (one command the
// wrapper acts on, one valid container id) says the same container, bundle and config file,
// that is the line, and the flag is named in Unknown; where the readings differ, Err says so.
// Up to maxUnknown such flags are read this way.
func ParseArgs(args []string) Command {
	first := parseWith(args, nil)
	if !errors.Is(first.Err, errUnknown) {
		return first.Command
	}
	var whole []Command // the readings with no error: each one the runtime might make of the line
	maybeActing := false
	readings := [][]bool{{false}, {true}}
	for tried := 0; len(readings) > 0 && tried < 2<<maxUnknown; tried++ {
		guesses := readings[0]
		readings = readings[1:]
		r := parseWith(args, guesses)
		maybeActing = maybeActing || acting[r.Name]
		switch {
		case errors.Is(r.Err, errUnknown) && len(guesses) < maxUnknown:
			readings = append(readings, append(slices.Clone(guesses), false), append(slices.Clone(guesses), true))
		case r.Err == nil:
			whole = append(whole, r.Command)
		}
	}
	switch {
	case len(whole) > 0 && sameReading(whole):
		return whole[0]
	case !maybeActing:
		// No reading is a command the wrapper acts on: the runtime's business alone.
		return Command{Name: first.Name}
	case len(whole) == 0:
		return Command{Name: first.Name, Err: fmt.Errorf("%w: %w", ErrUnreadable, first.Err)}
	}
	return Command{Name: first.Name, Err: fmt.Errorf("%w: %w; read as a boolean or as taking a value, it gives %s",
		ErrUnreadable, first.Err, readingsOf(whole))}
}

// maxUnknown bounds the unknown flags read both ways (2^maxUnknown whole readings at most).
const maxUnknown = 3

// errUnknown: a flag the wrapper does not know, without its value attached.
var errUnknown = errors.New("unknown flag")

// sameReading says whether the readings agree on what the wrapper acts on.
func sameReading(cs []Command) bool {
	for _, c := range cs[1:] {
		if c.Name != cs[0].Name || c.ContainerID != cs[0].ContainerID || c.Bundle != cs[0].Bundle || c.ConfigFile != cs[0].ConfigFile ||
			c.Help != cs[0].Help {
			return false
		}
	}
	return true
}

func readingsOf(cs []Command) string {
	var out []string
	for _, c := range cs {
		switch {
		case c.Help:
			out = append(out, fmt.Sprintf("%q --help", clip.String(c.Name)))
		case acting[c.Name]:
			out = append(out, fmt.Sprintf("%s %q (bundle %q)", c.Name, clip.String(c.ContainerID), clip.String(c.Bundle)))
		default:
			out = append(out, fmt.Sprintf("command %q", clip.String(c.Name)))
		}
	}
	return strings.Join(out, " or ")
}

// parsed is one reading of a command line.
type parsed struct {
	Command
	guesses []bool // what each unknown flag was taken for, in order: true takes the next argument
	used    int
}

// unknown is called for a flag the set does not know (f as readFlag left it): with a guess
// left, it returns it; without, errUnknown.
func (p *parsed) unknown(tok string) (takesValue bool, err error) {
	if p.used < len(p.guesses) {
		p.used++
		p.Unknown = append(p.Unknown, tok)
		return p.guesses[p.used-1], nil
	}
	return false, fmt.Errorf("%w %q", errUnknown, tok)
}

// parseWith reads the line with guesses for its unknown flags (see parsed).
func parseWith(args []string, guesses []bool) parsed {
	p := parsed{guesses: guesses}
	i, err := scanGlobal(args, &p)
	if err != nil || p.Name == "" {
		p.Err = err
		return p
	}
	rest := args[i+1:]
	switch p.Name {
	case "create", "run":
		p.Err = scanCreate(rest, &p)
	case "exec":
		p.Err = scanExec(rest, &p)
	}
	if p.Err == nil && !p.Help && acting[p.Name] && !ocistate.ValidContainerID(p.ContainerID) {
		p.Err = fmt.Errorf("%w: %s: container id %q is not a valid id", ErrUnreadable, p.Name, clip.String(p.ContainerID))
	}
	return p
}

// scanGlobal reads the global flags up to the command and returns the command's index.
func scanGlobal(args []string, p *parsed) (int, error) {
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			if i+1 < len(args) {
				p.Name = args[i+1]
				return i + 1, nil
			}
			return i, nil
		}
		if !isFlag(tok) {
			p.Name = tok
			return i, nil
		}
		f, err := readFlag(tok, globalFlags)
		if err != nil {
			// An unknown flag that carries its value (--x=v) is skipped; one followed by an
			// acting command is taken for a boolean.
			if f.attached || (i+1 < len(args) && acting[args[i+1]]) {
				p.Unknown = append(p.Unknown, tok)
				continue
			}
			if f.needsNext, err = p.unknown(tok); err != nil {
				return i, fmt.Errorf("global flag: %w", err)
			}
		}
		if f.needsNext {
			i++
		}
		if f.help {
			p.Help = true
		}
	}
	return len(args), nil
}

// scanCreate reads create's and run's flags, which crun (argp) accepts before and after the
// container id alike.
func scanCreate(args []string, p *parsed) error {
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
			p.Unknown = append(p.Unknown, tok)
			continue // --x=v: whatever it is, it carries its value
		}
		if err != nil {
			if f.needsNext, err = p.unknown(tok); err != nil {
				return fmt.Errorf("%s flag: %w", p.Name, err)
			}
			f.name = ""
		}
		if f.needsNext {
			if i+1 >= len(args) {
				return fmt.Errorf("%w: %s flag %q has no value", ErrUnreadable, p.Name, tok)
			}
			i++
			f.value = args[i]
		}
		switch f.name {
		case "bundle", "b":
			p.Bundle = f.value
		case "config", "f":
			p.ConfigFile = f.value
		}
		p.Help = p.Help || f.help
	}
	if len(ids) != 1 {
		if p.Help {
			return nil
		}
		return fmt.Errorf("%w: %s wants one container id, got %q", ErrUnreadable, p.Name, ids)
	}
	p.ContainerID = ids[0]
	return nil
}

// scanExec reads exec's flags up to the container id; what follows is the process to run.
func scanExec(args []string, p *parsed) error {
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			if i+1 < len(args) {
				p.ContainerID = args[i+1]
			}
			break
		}
		if !isFlag(tok) {
			p.ContainerID = tok
			break
		}
		f, err := readFlag(tok, execFlags)
		if err != nil && f.attached {
			p.Unknown = append(p.Unknown, tok)
			continue
		}
		if err != nil {
			if f.needsNext, err = p.unknown(tok); err != nil {
				return fmt.Errorf("exec flag: %w", err)
			}
		}
		if f.needsNext {
			if i+1 >= len(args) {
				return fmt.Errorf("%w: exec flag %q has no value", ErrUnreadable, tok)
			}
			i++
		}
		p.Help = p.Help || f.help
	}
	if p.ContainerID == "" && !p.Help {
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
