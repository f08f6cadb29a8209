package httpguard

import (
	"context"
	"log"
	"net"
	"net/http"
	"sync"
)

// Guard applies Limits to one server: Server makes the http.Server, Listener wraps what it
// serves on. One Guard per server.
type Guard struct {
	lim Limits

	mu      sync.Mutex
	open    []*conn // in accept order: the oldest first
	evicted int
	refused int
}

// Stats count the connections a Guard holds and has turned away.
type Stats struct {
	Open    int // connections open now
	Evicted int // connections closed to make room for a newcomer
	Refused int // newcomers closed because every connection was busy
}

// New returns a Guard with lim (zero fields take their defaults).
func New(lim Limits) *Guard {
	return &Guard{lim: lim.WithDefaults()}
}

// Limits are the Guard's limits, defaults applied.
func (g *Guard) Limits() Limits { return g.lim }

// Stats says where the Guard stands now.
func (g *Guard) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Stats{Open: len(g.open), Evicted: g.evicted, Refused: g.refused}
}

// Server returns an http.Server for h with the Guard's timeouts and header cap, reporting
// its connections' states to the Guard. Serve it on Listener's listener.
//
// Every request goes first through the Guard's own check (a request with a body is refused
// at once, body.go), then through front in order (front[0] first), then to the server's
// handler. That order holds even when the handler is replaced between here and serving:
// exporter-toolkit's web.Serve puts its basic auth around the server's handler, and a check
// behind it would come too late, after a bcrypt or a 401 that waits for the body. So the
// chain is put around whatever handler the server has when it starts serving (BaseContext
// is called once by Serve, before its first accept; connections' goroutines start after
// it, so they see the handler it set).
func (g *Guard) Server(h http.Handler, errorLog *log.Logger, front ...func(http.Handler) http.Handler) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: g.lim.ReadHeaderTimeout,
		ReadTimeout:       g.lim.ReadTimeout,
		WriteTimeout:      g.lim.WriteTimeout,
		IdleTimeout:       g.lim.IdleTimeout,
		MaxHeaderBytes:    g.lim.MaxHeaderBytes,
		ErrorLog:          errorLog,
		ConnState:         g.connState,
	}
	var once sync.Once // Serve may be called more than once (several listeners): wrap once
	srv.BaseContext = func(net.Listener) context.Context {
		once.Do(func() {
			next := srv.Handler
			if next == nil {
				next = http.DefaultServeMux // what net/http serves for a nil Handler
			}
			for i := len(front) - 1; i >= 0; i-- {
				next = front[i](next)
			}
			srv.Handler = refuseBodies(next)
		})
		return context.Background()
	}
	return srv
}

// Listener wraps inner so that at most MaxConnections accepted connections are open.
func (g *Guard) Listener(inner net.Listener) net.Listener { return &listener{Listener: inner, g: g} }

type listener struct {
	net.Listener
	g *Guard
}

// Accept never blocks on the cap: it admits the newcomer, closing the oldest connection
// not in a request if the cap is reached, or closes the newcomer if every one is busy.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc := l.g.admit(c); tc != nil {
			return tc, nil
		}
		_ = c.Close()
	}
}

// admit tracks c, making room if needed; nil when there is none.
func (g *Guard) admit(c net.Conn) *conn {
	g.mu.Lock()
	var victim *conn
	if len(g.open) >= g.lim.MaxConnections {
		victim = g.oldestWaiting()
		if victim == nil {
			g.refused++
			g.mu.Unlock()
			return nil
		}
		g.forget(victim)
		g.evicted++
	}
	tc := &conn{Conn: c, g: g, state: http.StateNew}
	g.open = append(g.open, tc)
	g.mu.Unlock()
	if victim != nil {
		// The server's goroutine reading it sees the close and ends the connection.
		_ = victim.Conn.Close()
	}
	return tc
}

// oldestWaiting is the oldest connection not in a request: one that has not sent its
// headers yet (new) or is idle between requests. Called with g.mu held.
func (g *Guard) oldestWaiting() *conn {
	for _, c := range g.open {
		if c.state == http.StateNew || c.state == http.StateIdle {
			return c
		}
	}
	return nil
}

// forget stops tracking c. Called with g.mu held.
func (g *Guard) forget(c *conn) {
	for i, o := range g.open {
		if o == c {
			g.open = append(g.open[:i], g.open[i+1:]...)
			return
		}
	}
}

// connState follows the server's view of each connection; a TLS connection is unwrapped
// to the one the listener accepted.
func (g *Guard) connState(nc net.Conn, s http.ConnState) {
	for {
		if tc, ok := nc.(*conn); ok {
			g.mu.Lock()
			tc.state = s
			if s == http.StateClosed || s == http.StateHijacked {
				g.forget(tc)
			}
			g.mu.Unlock()
			return
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return
		}
		nc = u.NetConn()
	}
}

// conn is an admitted connection.
type conn struct {
	net.Conn
	g     *Guard
	state http.ConnState // under g.mu
}

// Close releases the connection's place (once, however many times it is closed).
func (c *conn) Close() error {
	c.g.mu.Lock()
	c.g.forget(c)
	c.g.mu.Unlock()
	return c.Conn.Close()
}
