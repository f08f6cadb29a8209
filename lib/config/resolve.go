package config

import (
	"errors"
	"sort"
)

// Resolve is how every front end builds its configuration: the file at path (see Load), the
// environment, then the command-line overrides in flags (key → value, only the ones given).
// On error it still returns the best configuration it could make (defaults, an explicit
// failurePolicy from the file if it can be read, then whatever of the environment and the
// flags applies), so a hook can log and apply its failure policy.
func Resolve(path string, environ []string, flags map[string]string) (Config, error) {
	path = Path(path, environ)
	cfg, err := Load(path, environ)
	if err != nil {
		cfg = Default()
		if p := PolicyHint(path); p != "" {
			cfg.FailurePolicy = p
		}
		_ = cfg.ApplyEnv(environ)
	}
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	sort.Strings(keys) // errors in a stable order
	for _, k := range keys {
		err = errors.Join(err, cfg.Set(k, flags[k]))
	}
	if err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// FlagUsage is the help text of the command-line flag overriding key: what the key means,
// then where else it is set and its default, so --help is the reference in short.
func FlagUsage(key string) string {
	s := Setting{Key: key, Meaning: meaning(key)}
	return s.Meaning + " (overrides the config key " + key + " and " + s.Env() + "; default " + s.Default() + ")"
}

// ConfigFlagUsage is the help text of --config. A function, not a constant: DefaultPath is
// set at link time.
func ConfigFlagUsage() string {
	return "config file (default " + DefaultPath + " if it exists), unless " + ConfigEnv + " names one"
}
