package exporter

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// webUsers reads the basic_auth_users of the exporter-toolkit web configuration at path
// (user → bcrypt hash), for httpguard.BasicAuth to check ahead of exporter-toolkit. Read at
// each request, as exporter-toolkit reads the file at each request: a password changed in
// the file (a Secret updated) is taken by both at once.
func webUsers(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the web config: %w", err)
	}
	return parseWebUsers(b)
}

// parseWebUsers takes basic_auth_users out of a web configuration. Only that key is read
// (the rest is exporter-toolkit's, which validates the whole file at start); a file it
// cannot read is an error, and the request goes on to exporter-toolkit, which answers it.
func parseWebUsers(b []byte) (map[string]string, error) {
	var c struct {
		Users map[string]string `yaml:"basic_auth_users"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("parse the web config's basic_auth_users: %w", err)
	}
	return c.Users, nil
}
