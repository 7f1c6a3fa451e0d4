package httpproxy

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// clientIdle is how long the HTTP → HTTP proxy waits for a client that has
// started a request and then sends nothing: for the rest of its headers
// (http.Server.ReadHeaderTimeout) or for more of its body. Without it, a
// client that stops in the middle of a body holds a goroutine, and what
// the proxy has read of the body (the tap and the gate read a body up to
// the document limit before sending it on), for as long as it keeps the
// connection open: 40 such clients held 790 MB.
const clientIdle = 30 * time.Second

// clientKeepAlive is how long a client's connection may wait, idle, for its
// next request: net/http keeps one for ever without a bound, so idle
// connections could pile up to the process's file limit.
var clientKeepAlive = 2 * time.Minute

// errClientIdle ends a request whose client stopped sending its body.
var errClientIdle = errors.New("mcpdrift proxy: the client sent nothing more of its request body for " + clientIdle.String())

// idleBody is a request body whose every read must bring something within
// idle: a read deadline on the client's connection, set before each read
// until the body has been read to its end. (There net/http clears it, to
// watch the connection for the client going away; a deadline set after
// that would be taken for the client leaving, and cancel the request.)
type idleBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
	err  error // the read that waited too long: every later read fails alike
	done bool  // read to its end (or deadlines unsupported): no deadline any more
}

func (b *idleBody) Read(p []byte) (int, error) {
	switch {
	case b.err != nil:
		return 0, b.err
	case b.done:
		return b.ReadCloser.Read(p)
	case b.rc.SetReadDeadline(time.Now().Add(b.idle)) != nil:
		b.done = true
		return b.ReadCloser.Read(p)
	}
	n, err := b.ReadCloser.Read(p)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		b.err = errClientIdle
		return n, b.err
	}
	b.done = err != nil
	return n, err
}
