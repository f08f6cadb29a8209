package httpguard

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// BasicAuth checks HTTP basic auth ahead of a handler that checks it again at a cost the
// Guard cannot bound otherwise: exporter-toolkit's web handler runs every check it has not
// cached (bcrypt, ~50 ms at its usual cost) one at a time behind one lock, and a request
// waiting for that lock is in a request, a place the cap never evicts. Wrong passwords, each
// a different one so that no cache answers it, would then hold every place and keep out
// Prometheus and the probe; they also push the right passwords out of its 100-entry cache,
// so that a scrape waits behind them too.
//
// Here a password that passed is remembered (by a hash of user, password hash and password),
// so a scraper's requests after its first cost no bcrypt and go on at once; exporter-toolkit
// finds them in its cache too, since only such requests reach it. Any other password is
// checked by one of a bounded number of checkers; with none free, the request is answered
// 429 at once rather than waiting, so its connection is idle again (and evictable) at once.
// A wrong password is answered 401 here and never reaches exporter-toolkit. A request
// without credentials, or a server without users, goes on unchecked: the handler behind
// answers it, without a bcrypt.
//
// The price: while wrong passwords keep every checker busy, a client whose password has not
// passed since the server started (a new scraper, a changed password) is answered 429 until
// it finds a checker free. Scrapers already seen, and the probes, are not held up.
type BasicAuth struct {
	users  func() (map[string]string, error)
	checks chan struct{} // one token per check that may run at once

	mu     sync.Mutex
	passed map[[sha256.Size]byte]struct{}
}

// maxPassed bounds the remembered passwords. Only right passwords enter, so it fills only
// with more users (or password changes) than this; it is then emptied and fills again.
const maxPassed = 64

// noSuchUser is checked for a user that is not configured, so that answering an unknown user
// takes as long as a wrong password (bcrypt of a random phrase, at exporter-toolkit's usual
// cost 10).
const noSuchUser = "$2a$10$jjNtMVYTPTE.9xNmuC5OLesSNQEWkQGdAmSgPoEnGUFgez5tY7lha"

// NewBasicAuth checks against users, called at each request with credentials (user →
// bcrypt hash; a change is seen at once, as exporter-toolkit reads its file at each request
// too). checks bounds the bcrypt checks run at once (at least 1). users failing, or
// returning none, lets requests through to the handler behind, which answers them.
func NewBasicAuth(users func() (map[string]string, error), checks int) *BasicAuth {
	return &BasicAuth{users: users, checks: make(chan struct{}, max(checks, 1)), passed: map[[sha256.Size]byte]struct{}{}}
}

// Wrap puts the check in front of next; give it to Guard.Server as a front.
func (a *BasicAuth) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		users, err := a.users()
		if err != nil || len(users) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		switch a.check(users, user, pass) {
		case passed:
			next.ServeHTTP(w, r)
		case busy:
			w.Header().Set("Retry-After", "1")
			http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
		default:
			w.Header().Set("WWW-Authenticate", "Basic")
			http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
		}
	})
}

type verdict int

const (
	failed verdict = iota
	passed
	busy
)

func (a *BasicAuth) check(users map[string]string, user, pass string) verdict {
	hash, known := users[user]
	key := passKey(user, hash, pass)
	if known {
		a.mu.Lock()
		_, ok := a.passed[key]
		a.mu.Unlock()
		if ok {
			return passed
		}
	} else {
		hash = noSuchUser
	}
	select {
	case a.checks <- struct{}{}:
	default:
		return busy
	}
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass))
	<-a.checks
	if !known || err != nil {
		return failed
	}
	a.mu.Lock()
	if len(a.passed) >= maxPassed {
		clear(a.passed)
	}
	a.passed[key] = struct{}{}
	a.mu.Unlock()
	return passed
}

// passKey names a password that passed: the hash changes with the configured one, so a
// changed password is checked again; no password is kept in the clear.
func passKey(user, hash, pass string) [sha256.Size]byte {
	return sha256.Sum256(fmt.Appendf(nil, "%d:%s%d:%s%d:%s", len(user), user, len(hash), hash, len(pass), pass))
}
