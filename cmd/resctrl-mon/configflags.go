package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// The shared configuration as this CLI's flags, so that it accepts the same settings the same
// way as every binary: --config FILE, then one flag per top-level key (--retention 5m),
// overriding the file and the environment. config.BindFlags does it for the standard
// library's flag package (the hook, the NRI adapter), without linking urfave/cli into them.

// configFlags are --config and one string flag per settable key.
func configFlags() []cli.Flag {
	flags := []cli.Flag{&cli.StringFlag{Name: "config", Usage: config.ConfigFlagUsage()}}
	for _, k := range config.Keys() {
		flags = append(flags, &cli.StringFlag{Name: k, Usage: config.FlagUsage(k)})
	}
	return flags
}

// loadConfig builds the configuration from the file, the environment and the flags that
// were set (config.Resolve: on error it still returns the best configuration it could make).
func loadConfig(c *cli.Context) (config.Config, error) {
	set := map[string]string{}
	for _, k := range config.Keys() {
		if c.IsSet(k) {
			set[k] = c.String(k)
		}
	}
	return config.Resolve(c.String("config"), os.Environ(), set)
}
