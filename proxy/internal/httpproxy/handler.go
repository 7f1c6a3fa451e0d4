package httpproxy

import (
	"context"
	"errors"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/mcpdrift/mcpdrift/interceptor/httptap"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/h1client"
	"github.com/mcpdrift/mcpdrift/proxy/internal/streamhttp"
	"github.com/mcpdrift/mcpdrift/proxy/internal/telemetry"
)

// Handler is the HTTP → HTTP proxy: a reverse proxy for Streamable HTTP
// (and legacy SSE) to cfg.Upstream, with the interceptor's httptap under it
// recording every exchange. Requests pass as they are, apart from the
// trace context in params._meta and cfg.Header; responses stream through
// as they come (event streams flushed event by event); statuses, 404 on a
// lost session included, reach the client untouched, as the spec wants
// clients to see them.
type Handler struct {
	fw    *forwarder
	up    *h1client.Transport
	tap   *httptap.Transport
	gate  *httpGate // nil without a gate
	limit int       // the largest request body read to name a sessionless client
	idle  time.Duration
}

// NewHandler builds the HTTP → HTTP proxy.
func NewHandler(cfg config.Config, tel telemetry.Telemetry) (*Handler, error) {
	g, err := cfg.Ready()
	if err != nil {
		return nil, err
	}
	up, _ := url.Parse(cfg.Upstream)
	base := h1client.New(upstreamTransport(&cfg))
	var under http.RoundTripper = base
	var hg *httpGate
	if g.Active() {
		hg = newHTTPGate(base, g, &cfg, tel)
		under = hg
	}
	tap := httptap.NewTransportWith(under, telemetry.Interceptor(&cfg, tel))
	unreachable := "mcpdrift proxy: upstream " + serverid.Display(cfg.Upstream) + " unreachable"
	fw := &forwarder{target: up, header: cfg.Header, transport: tap, unreachable: unreachable}
	fw.upgrade = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out = fw.outgoing(pr.In, pr.Out.Context())
			pr.Out.Header.Set("Connection", "Upgrade")
			pr.Out.Header.Set("Upgrade", pr.In.Header.Get("Upgrade"))
		},
		Transport: tap,
		ErrorLog:  log.New(io.Discard, "", 0), // a cut connection is not the proxy's error
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if !errors.Is(err, context.Canceled) {
				http.Error(w, unreachable, http.StatusBadGateway)
			}
		},
	}
	return &Handler{fw: fw, up: base, tap: tap, gate: hg, limit: cfg.Limits.MaxDocumentBytes, idle: clientIdle}, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &idleBody{ReadCloser: r.Body, rc: http.NewResponseController(w), idle: h.idle}
	}
	if r.Header.Get(streamhttp.HeaderSessionID) == "" {
		r = r.WithContext(httptap.ContextWithClient(r.Context(), h.client(r)))
	}
	h.fw.ServeHTTP(w, r)
}

// upstreamTransport is the HTTP → HTTP proxy's client to the upstream.
func upstreamTransport(cfg *config.Config) *http.Transport {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = cfg.UpstreamTimeout
	base.MaxIdleConnsPerHost = 256
	// Its connections are shared by the sessions' POSTs, standing streams
	// having their own (h1client); its buffers are per connection,
	// so they are small (reads into the copy buffer bypass the read buffer).
	base.ReadBufferSize, base.WriteBufferSize = 2<<10, 2<<10
	return base
}

// client names the agent a sessionless (2026-07-28) request comes from, for
// the tap's spans (mcpdrift.client.session) and the gate's state: the
// client's host and the clientInfo its request's _meta carries. Not the
// TCP connection: clients spread their requests over pooled connections
// (the Go SDK lists on one and calls on another), so a connection is not a
// client. Two instances of one agent on one host are one client here.
func (h *Handler) client(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); r.Method != http.MethodPost || mt != "application/json" || r.Body == nil || r.Body == http.NoBody {
		return host // only a JSON-RPC body is read (as the tap reads it): anything else streams through
	}
	body, whole := readBounded(&r.Body, h.limit)
	if !whole {
		return host
	}
	info := jsonwire.Lookup(jsonwire.Lookup(jsonwire.Lookup(body, "params"), mcpwire.Meta), mcpwire.MetaClientInfo)
	name, _ := jsonwire.String(jsonwire.Lookup(info, "name"))
	version, _ := jsonwire.String(jsonwire.Lookup(info, "version"))
	return host + "\x00" + name + "\x00" + version
}

// Close ends the sessions the handler tracks.
func (h *Handler) Close() {
	if h.gate != nil {
		h.gate.Close()
	}
	h.tap.Close()
	h.up.Close()
}

// Serve runs the HTTP → HTTP proxy on l until ctx ends.
func Serve(ctx context.Context, l net.Listener, cfg config.Config, tel telemetry.Telemetry) error {
	h, err := NewHandler(cfg, tel)
	if err != nil {
		return err
	}
	defer h.Close()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: clientIdle, IdleTimeout: clientKeepAlive}
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
