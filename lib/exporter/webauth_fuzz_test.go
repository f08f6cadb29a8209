package exporter

import (
	"maps"
	"testing"
)

func TestParseWebUsers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want map[string]string
		err  bool
	}{
		{"", nil, false},
		{"tls_server_config:\n  cert_file: a\n", nil, false},
		{"basic_auth_users:\n  prom: $2y$10$x\n  other: \"$2a$04$y\"\n", map[string]string{"prom": "$2y$10$x", "other": "$2a$04$y"}, false},
		{"basic_auth_users: [a, b]\n", nil, true},
		{"basic_auth_users:\n  prom: {a: b}\n", nil, true},
		{":\n\t- nope", nil, true},
	} {
		got, err := parseWebUsers([]byte(c.in))
		if (err != nil) != c.err || !maps.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

// FuzzParseWebUsers: whatever the file holds, an error or users, never a panic.
func FuzzParseWebUsers(f *testing.F) {
	f.Add([]byte("basic_auth_users:\n  prom: $2y$10$x\n"))
	f.Add([]byte("tls_server_config: {cert_file: a}\nbasic_auth_users: {a: b, c: d}\n"))
	f.Add([]byte("basic_auth_users: [1]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		users, err := parseWebUsers(b)
		if err != nil && users != nil {
			t.Errorf("users %v with error %v", users, err)
		}
	})
}
