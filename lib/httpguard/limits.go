// Package httpguard bounds what HTTP clients can hold in a server that must stay small and
// answer its health probe whatever they do: timeouts on every phase of a connection, a cap
// on header size, and a cap on open connections that never queues a newcomer behind
// clients that are stalling.
//
// Why a cap that evicts rather than one that waits (golang.org/x/net/netutil's
// LimitListener): a waiting cap stops calling accept(2) at the limit, so once stalled
// clients hold every slot a fresh client (the kubelet's probe, Prometheus) waits in the
// kernel's backlog until a timeout frees one. Here the listener always accepts; at the cap
// the newcomer takes the place of the oldest connection that is not in the middle of a
// request (still sending its first request's headers, or idle between requests), which is
// what a stalling or half-sent client looks like. Connections busy with a response are
// few (a handler limits its expensive requests in flight; the rest answer in one write)
// and end at the write timeout. Only when every connection is busy is the newcomer closed.
// Memory is then bounded by MaxConnections connections, each bounded by MaxHeaderBytes
// and the handler's own limits.
//
// So nothing may keep a connection in a request on a client's say-so: a request with a
// body is answered 413 and its connection closed at once (body.go), and BasicAuth keeps
// wrong passwords from waiting for a bcrypt check (basicauth.go).
package httpguard

import "time"

// Limits bound one server. A zero field takes its default (Defaults).
type Limits struct {
	// ReadHeaderTimeout bounds the wait for a request's headers: a client that never
	// finishes them is closed then.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds a response, from the end of its request's headers: a client that
	// stops reading is closed then, and the handler's write fails, freeing what it held.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request for this long.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's headers (net/http adds 4 KiB of slack).
	MaxHeaderBytes int
	// MaxConnections caps the open connections; a newcomer beyond it takes the place of
	// the oldest one not in a request (see the package comment).
	MaxConnections int
}

// Defaults are the limits of a metrics endpoint scraped every 10 s or more by a few
// Prometheus servers and probed by the kubelet.
func Defaults() Limits {
	return Limits{
		// A scraper sends its headers in one packet.
		ReadHeaderTimeout: 5 * time.Second,
		// Nothing here takes a request body.
		ReadTimeout: 10 * time.Second,
		// Longer than Prometheus' longest usual scrape_timeout (10 s by default; a scrape
		// of 500 pods takes well under 1 s here), so only a client that stopped reading
		// is cut.
		WriteTimeout: 30 * time.Second,
		// Longer than the usual 15 s scrape interval, so a scraper's keep-alive connection
		// is reused; one scraping less often makes a new connection at each scrape (one
		// handshake), and a client that got its answer and stays connected without asking
		// again is gone after this.
		IdleTimeout: 30 * time.Second,
		// Basic auth and Prometheus' headers are well under 1 KiB (net/http's default is 1 MiB).
		MaxHeaderBytes: 16 << 10,
		// A few scrapers and probes use a handful; 64 idle connections cost ~2 MiB.
		MaxConnections: 64,
	}
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	d := Defaults()
	set := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	set(&l.ReadTimeout, d.ReadTimeout)
	set(&l.WriteTimeout, d.WriteTimeout)
	set(&l.IdleTimeout, d.IdleTimeout)
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.MaxConnections <= 0 {
		l.MaxConnections = d.MaxConnections
	}
	return l
}
