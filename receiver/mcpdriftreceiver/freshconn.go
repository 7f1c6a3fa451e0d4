package mcpdriftreceiver

import (
	"context"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
)

// withOwnConnections makes a probe's HTTP connections its own: it records
// every connection the probe's requests use (httptrace sees them through
// any wrapping of the collector's HTTP client) and done closes them once
// the probe has returned. The next probe then opens a new connection, so a
// load balancer that picks a backend per connection picks once per probe
// rather than once per keep-alive, and a mixed fleet is seen. The client
// must not serve another probe meanwhile (a target's probes take turns;
// samples have clients of their own). A connection no request of the probe
// used (the transport dials one for a request that another connection,
// freed meanwhile, then serves) is not seen here: the probe closes the
// client's idle connections too (newTargetClient).
func withOwnConnections(ctx context.Context) (_ context.Context, done func()) {
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		mu.Lock()
		defer mu.Unlock()
		conns[info.Conn] = true
	}}
	return httptrace.WithClientTrace(ctx, trace), func() {
		mu.Lock()
		defer mu.Unlock()
		for c := range conns {
			_ = c.Close()
		}
		clear(conns)
	}
}

// transportID names the middleware newTargetClient adds to a target's
// client configuration; it resolves only in newTargetClient's copy of the
// host's extensions.
var transportID = component.MustNewIDWithName("mcpdrift", "transport")

// newTargetClient is cc's client (confighttp) whose CloseIdleConnections
// reaches its http.Transport. The wrappers confighttp puts around the
// transport (otelhttp, headers, compression, auth) do not pass it on, so
// http.Client.CloseIdleConnections did nothing: a connection the transport
// dialed and no request used stayed idle (a keep-alive goroutine pair)
// until the transport's idle timeout, after a probe and after Shutdown
// (goleak, under load). A middleware of the receiver's own, applied first,
// sees the transport itself.
func newTargetClient(ctx context.Context, cc confighttp.ClientConfig, exts map[component.ID]component.Component, tel component.TelemetrySettings) (*http.Client, error) {
	var inner closeIdler
	withOwn := make(map[component.ID]component.Component, len(exts)+1)
	maps.Copy(withOwn, exts)
	withOwn[transportID] = transportGrab(func(rt http.RoundTripper) { inner, _ = rt.(closeIdler) })
	// Middlewares apply last to first: the last is the innermost.
	cc.Middlewares = append(slices.Clip(cc.Middlewares), configmiddleware.Config{ID: transportID})
	client, err := cc.ToClient(ctx, withOwn, tel)
	if err != nil {
		return nil, err
	}
	if inner != nil {
		client.Transport = idleClosing{RoundTripper: client.Transport, inner: inner}
	}
	return client, nil
}

type closeIdler interface{ CloseIdleConnections() }

// idleClosing is a client's outermost RoundTripper, passing
// CloseIdleConnections to its transport.
type idleClosing struct {
	http.RoundTripper
	inner closeIdler
}

func (t idleClosing) CloseIdleConnections() { t.inner.CloseIdleConnections() }

// transportGrab is a client middleware that wraps nothing: it hands the
// RoundTripper under it to its function.
type transportGrab func(http.RoundTripper)

var _ extensionmiddleware.HTTPClient = transportGrab(nil)

func (transportGrab) Start(context.Context, component.Host) error { return nil }
func (transportGrab) Shutdown(context.Context) error              { return nil }

func (g transportGrab) GetHTTPRoundTripper(context.Context) (extensionmiddleware.WrapHTTPRoundTripperFunc, error) {
	return func(_ context.Context, rt http.RoundTripper) (http.RoundTripper, error) {
		g(rt)
		return rt, nil
	}, nil
}
