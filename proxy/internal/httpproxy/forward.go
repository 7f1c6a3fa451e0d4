package httpproxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/mcpdrift/mcpdrift/interceptor/httptap"
	"github.com/mcpdrift/mcpdrift/proxy/internal/h1client"
)

// forwarder is the HTTP → HTTP mode's reverse proxy. It does what
// httputil.ReverseProxy (with Rewrite and FlushInterval -1) does for the
// requests MCP makes, without what a call pays for there and MCP never
// uses: a deep copy of the request's headers, a client trace for 1xx
// responses, and a goroutine per response that flushes the headers on
// their own before the body (here they leave with the first bytes of the
// body, as the upstream wrote them). Requests that ask to switch
// protocols go to upgrade (a ReverseProxy).
type forwarder struct {
	target      *url.URL
	header      http.Header // set on every upstream request (Config.Header)
	transport   http.RoundTripper
	unreachable string // the 502's body: names the upstream, without credentials
	upgrade     http.Handler
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if httpguts.HeaderValuesContainsToken(r.Header["Connection"], "Upgrade") {
		f.upgrade.ServeHTTP(w, r)
		return
	}
	hw := &heldWriter{w: w, rc: http.NewResponseController(w)}
	res, err := f.transport.RoundTrip(f.outgoing(r, h1client.WithWaiter(r.Context(), hw)))
	switch {
	case err == nil:
	case errors.Is(err, errClientIdle):
		http.Error(w, errClientIdle.Error(), http.StatusRequestTimeout)
		return
	case errors.Is(err, context.Canceled): // the client went away
		return
	default:
		http.Error(w, f.unreachable, http.StatusBadGateway)
		return
	}
	announced := len(res.Trailer)
	h := w.Header()
	copyEndToEnd(h, res.Header)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		h.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(res.StatusCode)
	if err := stream(hw, res.Body); err != nil {
		// The upstream or the client cut the body: the client must see a
		// cut stream, not one that ended cleanly.
		res.Body.Close()
		panic(http.ErrAbortHandler)
	}
	res.Body.Close() // now res.Trailer holds the trailers' values
	if len(res.Trailer) == 0 {
		return
	}
	_ = http.NewResponseController(w).Flush() // trailers need a chunked body
	unannounced := len(res.Trailer) != announced
	for k, vv := range res.Trailer {
		if unannounced {
			k = http.TrailerPrefix + k
		}
		h[k] = vv
	}
}

// outgoing is the upstream request for r, with ctx: a shallow copy (headers are
// shared read-only; RoundTrippers must not change them) with the target's
// scheme and host, the target's path and query for "/" and the target's
// path (other paths, a legacy SSE message endpoint, keep theirs), only
// end-to-end headers, no X-Forwarded-* or Forwarded (the client's are
// dropped, none are added), and Config.Header over the client's.
func (f *forwarder) outgoing(r *http.Request, ctx context.Context) *http.Request {
	out := r.WithContext(ctx)
	u := *r.URL
	u.Scheme, u.Host = f.target.Scheme, f.target.Host
	if u.Path == "" || u.Path == "/" || u.Path == f.target.Path {
		u.Path, u.RawPath = f.target.Path, f.target.RawPath
		u.RawQuery = withQuery(f.target.RawQuery, u.RawQuery)
	}
	u.RawQuery = cleanQuery(u.RawQuery)
	out.URL, out.Host, out.RequestURI, out.Close = &u, f.target.Host, "", false

	h := make(http.Header, len(r.Header)+len(f.header)+1)
	copyEndToEnd(h, r.Header)
	for k := range h {
		if isForwarding(k) {
			delete(h, k)
		}
	}
	// The proxy reads what it relays (spans, the gate, --lock hide): it asks
	// for answers it can read, and relays them uncompressed. (http.Transport
	// then asks for gzip itself and undoes it; the proxy's own connections
	// undo a gzip the upstream sends unasked, h1client/identity.go.)
	delete(h, "Accept-Encoding")
	if httpguts.HeaderValuesContainsToken(r.Header["Te"], "trailers") {
		h["Te"] = []string{"trailers"} // the proxy passes trailers through
	}
	for k, vv := range f.header {
		h[k] = vv
	}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // not Go's default: the client sent none
	}
	out.Header = h

	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		out.Body, out.ContentLength = nil, 0 // a nil body can be retried
	} else {
		// The transport closes the body it sends (on failure, before the
		// client's body was read): the server closes the client's.
		out.Body = io.NopCloser(r.Body)
	}
	return out
}

// hopByHop are the headers that describe one connection (RFC 9110, 7.6.1,
// and the proxy authentication pair): never forwarded either way.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// isForwarding reports whether k is a header that tells a server about the
// client or the URL it used (Forwarded, X-Forwarded-*, X-Real-Ip): not
// forwarded from the client, the proxy does not vouch for what it says.
func isForwarding(k string) bool {
	return k == "Forwarded" || k == "X-Real-Ip" || strings.HasPrefix(k, "X-Forwarded-")
}

// copyEndToEnd adds src's headers to dst except the hop-by-hop ones and
// those src's Connection header names. Values are shared, not copied.
func copyEndToEnd(dst, src http.Header) {
	conn := src["Connection"]
	for k, vv := range src {
		if isHopByHop(k) || (len(conn) > 0 && httpguts.HeaderValuesContainsToken(conn, k)) {
			continue
		}
		if prev, ok := dst[k]; ok {
			dst[k] = append(prev, vv...)
		} else {
			dst[k] = vv
		}
	}
}

func isHopByHop(k string) bool {
	for _, h := range hopByHop {
		if k == h {
			return true
		}
	}
	return false
}

// cleanQuery re-encodes a query a server could read differently from the
// proxy (a semicolon, a bad escape), as httputil.ReverseProxy does; others
// pass unchanged.
func cleanQuery(q string) string {
	for i := 0; i < len(q); i++ {
		switch {
		case q[i] == ';',
			q[i] == '%' && (i+2 >= len(q) || !isHex(q[i+1]) || !isHex(q[i+2])):
			v, _ := url.ParseQuery(q)
			return v.Encode()
		}
	}
	return q
}

// withQuery is the target's query (an upstream URL may carry its API key
// there) with the client's parameters the target does not set.
func withQuery(target, client string) string {
	if target == "" || client == "" {
		return target + client
	}
	set, _ := url.ParseQuery(target)
	extra, _ := url.ParseQuery(client)
	for k := range set {
		delete(extra, k)
	}
	if len(extra) == 0 {
		return target
	}
	return target + "&" + extra.Encode()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// headerWait bounds how long written bytes wait to be flushed with what
// follows them: the status and headers wait for the first bytes of the
// body, and an answer that ends an exchange waits for the end of the body,
// so what the upstream sent together is not split in two writes, while the
// headers of a stream with nothing to say yet still reach the client.
var headerWait = 5 * time.Millisecond

// onHold, when set (tests), is called each time the forwarder holds an
// answer for the end of its stream.
var onHold func()

// stream copies body to fw's client, flushing each read at once, so every
// SSE event reaches the client as the upstream wrote it; but for the status
// and headers, which leave with the first bytes of the body, and for the
// read that brought the last answer a POST waits for (httptap.Answered) or
// the body's end, which leave with the end of the body: a call's answer of
// one event is one write of headers, event and final chunk, and the client,
// having read its answer to the end, keeps its connection for the next call
// (the Go SDK closes an answer it has not read to the end, and with it the
// connection). Neither waits longer than headerWait. A read that may wait
// for the upstream (a quiet standing stream) holds a small buffer; a read
// after one that filled its buffer, more data being likely, takes a large
// one.
func stream(fw *heldWriter, body io.Reader) error {
	fw.start()
	defer fw.done()
	answered, _ := body.(httptap.Answered)
	big := true // the first bytes usually came with the headers
	for {
		pool := smallBuffers
		if big {
			pool = bigBuffers
		}
		p := pool.get()
		n, err := body.Read(*p)
		if n > 0 {
			hold := err == io.EOF || answered != nil && answered.Answered()
			if werr := fw.write((*p)[:n], hold); werr != nil {
				pool.put(p)
				return werr
			}
		}
		big = n == len(*p)
		pool.put(p)
		if err == io.EOF {
			return nil // the handler's end sends what is held, with the final chunk
		}
		if err != nil {
			fw.flush() // what came before the cut reaches the client
			return err
		}
	}
}

// heldWriter writes a response's body, flushing after each write unless
// told to hold it; what is held is flushed by the timer headerWait later at
// the latest, or by the handler's end.
//
// The timer runs only while held bytes wait for the upstream. Where the
// upstream connection is the proxy's own (h1client), its reads tell the
// writer when they go to the socket (h1client.WithWaiter), and the timer is armed only
// while bytes are held during one: a call whose answer and end came in one
// read, the usual case, starts no timer. A timer of a few milliseconds,
// being the earliest the runtime has, wakes the network poller each time
// it is set (an eventfd write, a read and a poll): a tenth of the proxy's
// CPU per call (docs/proxy.md "Measured"). Other upstream connections
// (TLS, an HTTP proxy) do not tell: there the timer is armed whenever
// bytes are held.
type heldWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	timer *time.Timer // made when first armed

	mu      sync.Mutex // the timer's goroutine flushes too; a pump may read the upstream
	lazy    bool       // the upstream's reads call Reading
	waiting bool       // a read from the upstream is under way
	held    bool       // written (or the headers set) and not flushed
	armed   bool       // the timer will fire
	over    bool       // the handler is over: w is not ours any more
}

func (f *heldWriter) Attach() {
	f.mu.Lock()
	f.lazy = true
	f.mu.Unlock()
}

func (f *heldWriter) Reading(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waiting = on
	if on && f.held && !f.over {
		f.arm()
	}
}

// start holds the status and headers for the body's first bytes.
func (f *heldWriter) start() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = true
	if !f.lazy || f.waiting {
		f.arm()
	}
}

// arm starts the timer unless it runs; f.mu is held.
func (f *heldWriter) arm() {
	switch {
	case f.armed:
	case f.timer == nil:
		f.timer = time.AfterFunc(headerWait, f.expire)
	default:
		f.timer.Reset(headerWait)
	}
	f.armed = true
}

func (f *heldWriter) write(p []byte, hold bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.w.Write(p); err != nil {
		return err
	}
	if !hold {
		f.held = false
		return f.rc.Flush()
	}
	f.held = true
	if onHold != nil {
		onHold()
	}
	if !f.lazy || f.waiting {
		f.arm()
	}
	return nil
}

// expire flushes what is held when the timer fires.
func (f *heldWriter) expire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
	if f.held && !f.over {
		f.held = false
		_ = f.rc.Flush()
	}
}

func (f *heldWriter) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held {
		f.held = false
		_ = f.rc.Flush()
	}
}

// done keeps the timer off w once the handler is over.
func (f *heldWriter) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.over = true
	if f.timer != nil {
		f.timer.Stop()
	}
}

// The copy buffers. A standing stream waits on a small one (a thousand
// open sessions hold a thousand); bursts borrow large ones for as long as
// they last.
var (
	smallBuffers = &bufferPool{size: 1 << 10}
	bigBuffers   = &bufferPool{size: 32 << 10}
)

// bufferPool pools buffers of one size (pointers, so that putting one
// back allocates nothing).
type bufferPool struct {
	size int
	p    sync.Pool
}

func (b *bufferPool) get() *[]byte {
	if buf, ok := b.p.Get().(*[]byte); ok {
		return buf
	}
	buf := make([]byte, b.size)
	return &buf
}

func (b *bufferPool) put(buf *[]byte) { b.p.Put(buf) }
