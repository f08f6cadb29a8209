package httpguard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/resctrl-mon/resctrl-mon/lib/httpguard"
)

// TestBasicAuthChecks: a right password goes on to the handler, a wrong one or an unknown
// user is answered 401 without reaching it, a request without credentials goes on (the
// handler behind answers it), and a password that passed stops passing once the configured
// hash changes: what is remembered is bound to the hash.
func TestBasicAuthChecks(t *testing.T) {
	t.Parallel()
	hash := func(pw string) string {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	var mu sync.Mutex
	users := map[string]string{"prom": hash("pw")}
	a := httpguard.NewBasicAuth(func() (map[string]string, error) {
		mu.Lock()
		defer mu.Unlock()
		return map[string]string{"prom": users["prom"]}, nil
	}, 1)
	h := a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "served") }))
	ask := func(user, pw string, auth bool) int {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if auth {
			r.SetBasicAuth(user, pw)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, c := range []struct {
		name       string
		user, pw   string
		auth       bool
		want       int
		changeHash bool
	}{
		{"right", "prom", "pw", true, http.StatusOK, false},
		{"right again (remembered)", "prom", "pw", true, http.StatusOK, false},
		{"wrong", "prom", "nope", true, http.StatusUnauthorized, false},
		{"unknown user", "nobody", "pw", true, http.StatusUnauthorized, false},
		{"no credentials: the handler's", "", "", false, http.StatusOK, false},
		{"the old password after a change", "prom", "pw", true, http.StatusUnauthorized, true},
		{"the new password", "prom", "pw2", true, http.StatusOK, false},
	} {
		if c.changeHash {
			mu.Lock()
			users["prom"] = hash("pw2")
			mu.Unlock()
		}
		if got := ask(c.user, c.pw, c.auth); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
