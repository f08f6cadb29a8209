package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// maxFileSize bounds the config file: anything bigger is not a config.
const maxFileSize = 1 << 20

// Parse reads a YAML (or JSON) config over the defaults. Unknown keys are errors, so a
// misspelt key does not silently leave the default in place.
func Parse(r io.Reader) (Config, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	if len(b) > maxFileSize {
		return Config{}, fmt.Errorf("config is larger than %d bytes", maxFileSize)
	}
	// YAML to a generic tree, then through JSON into the struct: one set of field names
	// (the json tags) and unknown keys refused.
	var tree any
	if err := yaml.Unmarshal(b, &tree); err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	c := Default()
	if tree == nil {
		return c, nil
	}
	if err := exactKeys(tree, reflect.TypeFor[Config](), ""); err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	j, err := json.Marshal(tree)
	if err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	return c, nil
}

// exactKeys refuses a key that matches a field only in another case. encoding/json matches
// keys case-insensitively, so "FailurePolicy: closed" took effect in a file that loaded,
// while PolicyHint (which must read a broken file without the decoder) did not see it: the
// same file failed closed or open depending on an error elsewhere in it. One spelling only.
func exactKeys(tree any, t reflect.Type, at string) error {
	m, ok := tree.(map[string]any)
	if !ok || t.Kind() != reflect.Struct {
		return nil // not an object, or not a struct: the decoder judges it
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		for i := range t.NumField() {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if name == k {
				if err := exactKeys(m[k], f.Type, at+k+"."); err != nil {
					return err
				}
				break
			}
			if strings.EqualFold(name, k) {
				return fmt.Errorf("unknown key %q (did you mean %q?)", at+k, at+name)
			}
		}
	}
	return nil
}

// Load builds the configuration: defaults, then the file at path (when empty, the file
// ConfigEnv names, else DefaultPath, where a missing file is fine), then environment
// variables (see Env), then validates.
func Load(path string, environ []string) (Config, error) {
	path = Path(path, environ)
	named := path != ""
	if !named {
		path = DefaultPath
	}
	c := Default()
	f, err := os.Open(path)
	switch {
	case err == nil:
		c, err = Parse(f)
		_ = f.Close()
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
	case named || !errors.Is(err, fs.ErrNotExist):
		return Config{}, fmt.Errorf("config file: %w", err)
	}
	if err := c.ApplyEnv(environ); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Path is the config file a binary reads: the one named by --config, else the one named by
// the environment variable ConfigEnv, else "" (DefaultPath, which may be missing).
func Path(flag string, environ []string) string {
	if flag != "" {
		return flag
	}
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, ConfigEnv+"="); ok {
			return v
		}
	}
	return ""
}

// EnvPrefix starts every environment variable the configuration reads.
const EnvPrefix = "RESCTRL_MON_"

// EnvName is the environment variable for a top-level key: resctrlRoot → RESCTRL_MON_RESCTRL_ROOT.
func EnvName(key string) string {
	var b strings.Builder
	for i, r := range key {
		if r >= 'A' && r <= 'Z' && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return EnvPrefix + strings.ToUpper(b.String())
}

// ApplyEnv overrides scalar top-level keys from RESCTRL_MON_* variables (lists and nested
// keys come from the file). An unknown RESCTRL_MON_ variable is an error: it is a typo.
func (c *Config) ApplyEnv(environ []string) error {
	keys := envKeys(c.scalarFields())
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) || name == ConfigEnv {
			continue
		}
		key, known := keys[name]
		if !known {
			return fmt.Errorf("environment variable %s: no such setting", name)
		}
		if err := c.Set(key, val); err != nil {
			return fmt.Errorf("environment variable %s: %w", name, err)
		}
	}
	return nil
}

func envKeys(fields map[string]reflect.Value) map[string]string {
	out := map[string]string{}
	for key := range fields {
		out[EnvName(key)] = key
	}
	return out
}

// Keys lists the settable top-level keys (what Set, flags and environment accept), sorted:
// flags and their help are listed in this order.
func Keys() []string {
	c := Default()
	return slices.Sorted(maps.Keys(c.scalarFields()))
}

// Set sets one top-level key from its string form, as a flag or variable gives it.
func (c *Config) Set(key, val string) error {
	f, ok := c.scalarFields()[key]
	if !ok {
		return fmt.Errorf("config key %q: no such setting", key)
	}
	switch f.Interface().(type) {
	case Duration:
		d, err := time.ParseDuration(val)
		if err != nil {
			return fmt.Errorf("config key %q: %q is not a duration like 90s or 5m", key, val)
		}
		f.Set(reflect.ValueOf(Duration(d)))
	case bool:
		b, err := strconv.ParseBool(val)
		if err != nil {
			return fmt.Errorf("config key %q: %q is not true or false", key, val)
		}
		f.SetBool(b)
	case int:
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("config key %q: %q is not a number", key, val)
		}
		f.SetInt(int64(n))
	default: // strings and string kinds
		f.SetString(val)
	}
	return nil
}

// scalarFields maps each top-level scalar key to its settable field.
func (c *Config) scalarFields() map[string]reflect.Value {
	v := reflect.ValueOf(c).Elem()
	out := map[string]reflect.Value{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		key := strings.Split(f.Tag.Get("json"), ",")[0]
		switch v.Field(i).Kind() {
		case reflect.String, reflect.Int, reflect.Int64, reflect.Bool:
			out[key] = v.Field(i)
		}
	}
	return out
}
