package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
)

// httpBase is what the two HTTP transports share: the client, the endpoint,
// the static headers, and the probe runtime.
type httpBase struct {
	rt       *probeRuntime
	client   *http.Client
	own      bool // the probe built client and must release its connections
	endpoint *url.URL
	headers  http.Header
}

func newHTTPBase(t *Target, rt *probeRuntime) (*httpBase, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, failure(ClassUnreachable, "invalid URL %s", serverid.Display(t.URL))
	}
	b := &httpBase{rt: rt, endpoint: u, headers: t.Headers, client: t.HTTPClient}
	if b.client == nil {
		b.own = true
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if t.TLS != nil {
			tr.TLSClientConfig = t.TLS.Clone()
		}
		tr.ResponseHeaderTimeout = rt.opts.RequestTimeout
		b.client = &http.Client{Transport: tr, CheckRedirect: sameOriginRedirects}
	}
	return b, nil
}

// sameOriginRedirects follows redirects only within the endpoint's origin:
// a redirect elsewhere would carry the configured headers (secrets) to a
// host nobody configured. The 3xx is then reported as http_status.
func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return http.ErrUseLastResponse
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return http.ErrUseLastResponse
	}
	return nil
}

// release closes idle connections of a client the probe built.
func (b *httpBase) release() {
	if b.own {
		b.client.CloseIdleConnections()
	}
}

// newRequest builds a request with the static headers. Every header value
// written on the wire, whichever RoundTripper added it, is handed to the
// redactor before the server can echo it.
func (b *httpBase) newRequest(ctx context.Context, method string, u *url.URL, body io.Reader) (*http.Request, error) {
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaderField: b.rt.red.sentHeader})
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, failure(ClassUnreachable, "building request: %v", b.rt.red.err(unwrapURLError(err)))
	}
	for k, vs := range b.headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	return req, nil
}

// do sends a request, classifying transport failures.
func (b *httpBase) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, b.networkError(ctx, err)
	}
	b.rt.red.receivedCookies(resp.Header)
	resp.Body = meteredBody{Reader: &meteredReader{r: resp.Body, b: b.rt.budget}, Closer: resp.Body}
	return resp, nil
}

// networkError classifies an error from sending a request or reading a
// response body: the request's context expiring is a timeout, anything
// else (refused, reset, DNS, TLS) makes the server unreachable.
func (b *httpBase) networkError(ctx context.Context, err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return &Error{Class: ClassTimeout, Err: ctxErr}
	}
	err = unwrapURLError(err)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Class: ClassTimeout, Err: b.rt.red.err(err)}
	}
	return &Error{Class: ClassUnreachable, Err: b.rt.red.err(err)}
}

// readBody reads a whole (non-SSE) body, refusing more than max bytes.
// The buffer is sized from Content-Length when the server sent one.
func (b *httpBase) readBody(ctx context.Context, resp *http.Response, max int) ([]byte, error) {
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n <= int64(max) {
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, int64(max)+1)); err != nil {
		return nil, b.networkError(ctx, err)
	}
	if buf.Len() > max {
		return nil, failure(ClassTooLarge, "response body exceeded the limit of %d bytes", max)
	}
	return buf.Bytes(), nil
}

// meteredBody is a response body whose reads are charged to the budget.
type meteredBody struct {
	io.Reader
	io.Closer
}

// accepted checks that a POST of a notification or response was accepted
// (2xx, usually 202) and drains the body.
func (b *httpBase) accepted(ctx context.Context, resp *http.Response) error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return b.statusErr(ctx, resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, int64(b.rt.opts.MaxMessageBytes)))
	return resp.Body.Close()
}

// mediaType returns the lower-case media type of a Content-Type header.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return strings.ToLower(strings.TrimSpace(h.Get("Content-Type")))
	}
	return mt
}

// statusError is an HTTP response the probe cannot use as is. The
// handshake inspects it (a 4xx without a modern JSON-RPC error means a
// legacy server); otherwise it becomes an http_status or auth_required
// Error.
type statusError struct {
	code      int
	rpc       *rpcError // a JSON-RPC error in the body, if any
	challenge []string  // WWW-Authenticate values
	location  string    // sanitized Location of a redirect
	endpoint  *url.URL
}

func (e *statusError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.code, http.StatusText(e.code))
	if e.rpc != nil {
		s += ": " + e.rpc.Error()
	}
	if e.location != "" {
		s += " (redirect to " + e.location + ", not followed)"
	}
	return s
}

// modern reports whether the body held an error only a 2026-07-28+ server sends.
func (e *statusError) modern() bool { return e.rpc != nil && isModernCode(e.rpc.Code) }

// statusErr reads what matters from a failed response and closes it.
func (b *httpBase) statusErr(ctx context.Context, resp *http.Response) *statusError {
	defer resp.Body.Close()
	se := &statusError{code: resp.StatusCode, challenge: resp.Header.Values("WWW-Authenticate"), endpoint: b.endpoint}
	if loc := resp.Header.Get("Location"); loc != "" {
		se.location = serverid.Display(loc)
	}
	body, err := b.readBody(ctx, resp, 64<<10)
	if err == nil && mediaType(resp.Header) == "application/json" {
		var wire struct {
			Error *struct {
				Code    int64           `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &wire) == nil && wire.Error != nil {
			se.rpc = &rpcError{Code: wire.Error.Code, Message: b.rt.red.text(wire.Error.Message), Data: wire.Error.Data}
		}
	}
	return se
}

// asProbeError turns a status error into the Error a caller sees.
func (e *statusError) asProbeError(red *redactor) *Error {
	authChallenge := len(e.challenge) > 0
	if e.code == http.StatusUnauthorized || (e.code == http.StatusForbidden && authChallenge) {
		pe := &Error{Class: ClassAuthRequired, StatusCode: e.code, Err: errors.New(red.text(e.Error()))}
		pe.ResourceMetadata = red.text(resourceMetadataURL(e.challenge, e.endpoint))
		return pe
	}
	pe := &Error{Class: ClassHTTPStatus, StatusCode: e.code, Err: errors.New(red.text(e.Error()))}
	if e.rpc != nil {
		pe.RPCCode = e.rpc.Code
	}
	return pe
}

// resourceMetadataURL returns the protected-resource metadata URL a 401
// points to: the resource_metadata parameter of a Bearer challenge (MCP
// authorization spec), else the RFC 9728 well-known URL for the endpoint
// (path-aware: /.well-known/oauth-protected-resource{path}).
func resourceMetadataURL(challenges []string, endpoint *url.URL) string {
	if parsed, err := oauthex.ParseWWWAuthenticate(challenges); err == nil {
		for _, c := range parsed {
			if v := c.Params["resource_metadata"]; v != "" {
				return serverid.Display(v)
			}
		}
	}
	wk := url.URL{Scheme: endpoint.Scheme, Host: endpoint.Host, Path: "/.well-known/oauth-protected-resource"}
	if p := strings.TrimSuffix(endpoint.Path, "/"); p != "" {
		wk.Path += p
	}
	return wk.String()
}

// closeTimeout bounds the best-effort goodbye (HTTP DELETE of a session).
const closeTimeout = time.Second
