package proxy

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/httptap"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
)

// Handler is the HTTP → HTTP proxy: a reverse proxy for Streamable HTTP
// (and legacy SSE) to cfg.Upstream, with the interceptor's httptap under it
// recording every exchange. Requests pass as they are, apart from the
// trace context in params._meta and cfg.Header; responses stream through
// as they come (event streams flushed event by event); statuses, 404 on a
// lost session included, reach the client untouched, as the spec wants
// clients to see them.
type Handler struct {
	rp   *httputil.ReverseProxy
	tap  *httptap.Transport
	gate *httpGate // nil without a gate
}

// NewHandler builds the HTTP → HTTP proxy.
func NewHandler(cfg Config, tel Telemetry) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.complete()
	up, _ := url.Parse(cfg.Upstream)
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = cfg.UpstreamTimeout
	base.MaxIdleConnsPerHost = 256
	// Every open session holds an upstream connection for its standing
	// stream; its buffers are per connection, so they are small (reads into
	// the copy buffer bypass the read buffer).
	base.ReadBufferSize, base.WriteBufferSize = 2<<10, 2<<10
	var under http.RoundTripper = base
	g, err := newGate(&cfg)
	if err != nil {
		return nil, err
	}
	var hg *httpGate
	if g.active() {
		hg = newHTTPGate(base, g, &cfg, tel)
		under = hg
	}
	tap := httptap.NewTransportWith(under, interceptor.New(interceptorOptions(&cfg, tel)...))
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = up.Scheme, up.Host, up.Host
			if pr.In.URL.Path == "" || pr.In.URL.Path == "/" {
				pr.Out.URL.Path, pr.Out.URL.RawPath = up.Path, up.RawPath
			}
			for k, v := range cfg.Header {
				pr.Out.Header[k] = v
			}
		},
		Transport:     tap,
		FlushInterval: -1, // every write reaches the client at once: SSE events, long polls
		BufferPool:    copyBuffers,
		// A stream the client or the server cut is not the proxy's error
		// to report: a server restart would print a line per open session.
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			msg := "mcpdrift proxy: upstream " + serverid.Display(cfg.Upstream) + " unreachable"
			if errors.Is(err, context.Canceled) {
				return // the client went away
			}
			http.Error(w, msg, http.StatusBadGateway)
		},
	}
	return &Handler{rp: rp, tap: tap, gate: hg}, nil
}

// copyBuffers are the buffers responses are copied through. A standing
// event stream holds one for as long as it is open, so they are small
// (httputil's own are 32 KiB each: a thousand open sessions would hold
// 32 MB); a large response takes more reads, not more memory.
var copyBuffers httputil.BufferPool = &bufferPool{size: 4 << 10}

type bufferPool struct {
	size int
	p    sync.Pool
}

func (b *bufferPool) Get() []byte {
	if buf, ok := b.p.Get().(*[]byte); ok {
		return *buf
	}
	return make([]byte, b.size)
}

func (b *bufferPool) Put(buf []byte) {
	if cap(buf) == b.size {
		b.p.Put(&buf)
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(headerSessionID) == "" {
		// A sessionless (2026-07-28) client is its connection: the tap's
		// spans and the gate's state are kept per client connection.
		r = r.WithContext(httptap.ContextWithClient(r.Context(), r.RemoteAddr))
	}
	h.rp.ServeHTTP(w, r)
}

// Close ends the sessions the handler tracks.
func (h *Handler) Close() {
	if h.gate != nil {
		h.gate.Close()
	}
	h.tap.Close()
	h.tap.CloseIdleConnections()
}

// Serve runs the HTTP → HTTP proxy on l until ctx ends.
func Serve(ctx context.Context, l net.Listener, cfg Config, tel Telemetry) error {
	h, err := NewHandler(cfg, tel)
	if err != nil {
		return err
	}
	defer h.Close()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut) // long-lived streams are cut after the grace
	_ = srv.Close()
	<-done
	return nil
}
