package httpguard

import (
	"fmt"
	"net/http"
)

// refuseBodies answers a request that has a body 413 at once, and closes its connection.
//
// Why: a server that takes no body still waits for one a client announces. net/http reads up
// to 256 KiB of an unread body before it sends the handler's response (and again when the
// handler returns) so that the connection can serve the next request; a body that never
// comes holds the connection in a request, which the cap never evicts (guard.go), until the
// read timeout. A few dozen such requests, each a header and nothing else, would hold every
// place and keep the kubelet's probe out. Every request that the servers guarded here
// answer (metrics, health, the index) is a GET or HEAD without a body, so a declared length
// above 0 or a chunked body, on any method, is refused without reading it.
func refuseBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ContentLength is -1 for a chunked body (HTTP/1.1) or a stream whose headers did not
		// end it (HTTP/2), 0 for none or an empty one declared.
		if r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		refuseBody(w, r)
	})
}

const bodyRefused = "413 Request Entity Too Large: this server takes no request body\n"

// refuseBody answers 413 with Connection: close. On HTTP/1 the connection is taken from the
// server (hijacked) and closed after the answer: the server reports it hijacked, which frees
// its place in the cap at once, and never reads the body. Answered through the server
// instead, the place would be held while net/http tries to read the body after the handler
// (up to the read timeout), or, for a declared length over 256 KiB, for its 500 ms wait
// before closing. A client that did send part of its body may get a reset instead of the
// answer (closing with unread data does that): it gets no service either way. An HTTP/2
// connection cannot be hijacked: the request is answered 413 on its stream, which net/http's
// HTTP/2 server resets (NO_ERROR) after the answer instead of waiting for the body.
func refuseBody(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 {
		if c, rw, err := http.NewResponseController(w).Hijack(); err == nil {
			defer func() { _ = c.Close() }()
			// The server's write deadline (WriteTimeout) stays on the hijacked connection.
			body := bodyRefused
			if r.Method == http.MethodHead {
				body = ""
			}
			_, _ = fmt.Fprintf(rw, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(bodyRefused), body)
			_ = rw.Flush()
			return
		}
	}
	http.Error(w, bodyRefused, http.StatusRequestEntityTooLarge)
}
