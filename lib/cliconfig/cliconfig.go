// Package cliconfig turns the shared configuration into command-line flags, so the hook, the
// NRI adapter and the CLI accept the same settings the same way: --config FILE, then one flag
// per top-level key (--retention 5m), overriding the file and the environment.
package cliconfig

import (
	"errors"
	"os"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// Flags are --config and one string flag per settable key.
func Flags() []cli.Flag {
	flags := []cli.Flag{&cli.StringFlag{Name: "config", Usage: "config file (default " + config.DefaultPath + " if it exists)"}}
	keys := config.Keys()
	sort.Strings(keys)
	for _, k := range keys {
		flags = append(flags, &cli.StringFlag{Name: k, Usage: "overrides the config key " + k + " (env " + config.EnvName(k) + ")"})
	}
	return flags
}

// Load builds the configuration from the file, the environment and the flags that were set.
// On error it still returns the best configuration it could make (defaults, then whatever
// of the environment and flags applies), so a hook can log and apply its failure policy.
func Load(c *cli.Context) (config.Config, error) {
	cfg, err := config.Load(c.String("config"), os.Environ())
	if err != nil {
		cfg = config.Default()
		if p := config.PolicyHint(c.String("config")); p != "" {
			cfg.FailurePolicy = p
		}
		_ = cfg.ApplyEnv(os.Environ())
	}
	for _, k := range config.Keys() {
		if c.IsSet(k) {
			err = errors.Join(err, cfg.Set(k, c.String(k)))
		}
	}
	if err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}
