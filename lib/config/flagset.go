package config

import "flag"

// FlagSet binds the configuration's flags on a standard library flag.FlagSet: --config and one
// string flag per key, as lib/cliconfig does for urfave/cli (which this package does not
// link). The hook parses with the standard library (urfave/cli's start would be paid on every
// container's start), and so does the NRI adapter.
type FlagSet struct {
	fs   *flag.FlagSet
	path *string
	keys map[string]bool
}

// BindFlags defines the flags on fs. Their help texts are left empty until FillUsage: each
// names its key's default, and making them all costs more than the rest of a hook's command
// line, on a call that rarely prints them.
func BindFlags(fs *flag.FlagSet) *FlagSet {
	s := &FlagSet{fs: fs, path: fs.String("config", "", ""), keys: map[string]bool{}}
	for _, k := range Keys() {
		fs.String(k, "", "")
		s.keys[k] = true
	}
	return s
}

// FillUsage writes the flags' help texts; call it in fs.Usage, before PrintDefaults.
func (s *FlagSet) FillUsage() {
	s.fs.VisitAll(func(f *flag.Flag) {
		switch {
		case f.Name == "config":
			f.Usage = ConfigFlagUsage()
		case s.keys[f.Name]:
			f.Usage = FlagUsage(f.Name)
		}
	})
}

// Path is the --config given, "" for none.
func (s *FlagSet) Path() string { return *s.path }

// Given is every config key given as a flag, by key (for config.Resolve).
func (s *FlagSet) Given() map[string]string {
	set := map[string]string{}
	s.fs.Visit(func(f *flag.Flag) {
		if s.keys[f.Name] {
			set[f.Name] = f.Value.String()
		}
	})
	return set
}
