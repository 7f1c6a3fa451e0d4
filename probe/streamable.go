package probe

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpdrift/mcpdrift/contract"
)

// HTTP headers of the Streamable HTTP transport.
const (
	headerProtocolVersion = "MCP-Protocol-Version"
	headerSessionID       = "Mcp-Session-Id"
	headerMethod          = "Mcp-Method"
)

// streamableConn speaks Streamable HTTP: each message is a POST, answered by
// JSON or by an SSE stream scoped to the request; an initialize-era server
// may also assign a session and offer a standalone GET stream, which the
// probe opens to hear list_changed.
//
// Hand-written rather than the go-sdk's StreamableClientTransport because a
// probe needs what that transport hides: the status code, headers
// (WWW-Authenticate) and body of a refused POST (the spec's era detection
// inspects the body of a 400), typed errors for size limits and malformed
// responses, no reconnect back-off, and the raw JSON of each response.
type streamableConn struct {
	*httpBase
	in inbox

	mu        sync.Mutex
	version   string // MCP-Protocol-Version to send ("" before initialize)
	modern    bool
	sessionID string

	bg     context.Context // lives until close: the standalone GET stream
	stop   context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

func newStreamable(ctx context.Context, base *httpBase, in inbox) *streamableConn {
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	return &streamableConn{httpBase: base, in: in, bg: bg, stop: stop}
}

func (c *streamableConn) transport() string { return contract.TransportStreamableHTTP }

func (c *streamableConn) negotiated(version string, modern bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version, c.modern = version, modern
	if modern {
		c.sessionID = "" // 2026-07-28 has no sessions
	}
}

// post sends one message and returns the response (status checked by the caller).
func (c *streamableConn) post(ctx context.Context, msg jsonrpc.Message, method string) (*http.Response, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, failure(ClassProtocolError, "encoding %s: %v", method, err)
	}
	req, err := c.newRequest(ctx, http.MethodPost, c.endpoint, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.mu.Lock()
	if c.version != "" {
		req.Header.Set(headerProtocolVersion, c.version)
	}
	if c.modern && method != "" {
		req.Header.Set(headerMethod, method)
	}
	if c.sessionID != "" {
		req.Header.Set(headerSessionID, c.sessionID)
	}
	c.mu.Unlock()
	resp, err := c.do(ctx, req)
	if err != nil {
		return nil, err
	}
	if sid := resp.Header.Get(headerSessionID); sid != "" {
		c.mu.Lock()
		if !c.modern && c.sessionID == "" {
			c.sessionID = sid
		}
		c.mu.Unlock()
	}
	return resp, nil
}

func (c *streamableConn) call(ctx context.Context, req *jsonrpc.Request) (*jsonrpc.Response, error) {
	resp, err := c.post(ctx, req, req.Method)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.statusErr(ctx, resp)
	}
	defer resp.Body.Close()
	switch mt := mediaType(resp.Header); mt {
	case "application/json":
		body, err := c.readBody(ctx, resp, c.rt.opts.MaxMessageBytes)
		if err != nil {
			return nil, err
		}
		msg, err := decodeMessage(body)
		if err != nil {
			return nil, err
		}
		r, ok := msg.(*jsonrpc.Response)
		if !ok || !answers(r, req.ID) {
			return nil, failure(ClassProtocolError, "the JSON body is not the response to the request")
		}
		return r, nil
	case "text/event-stream":
		return c.readStream(ctx, resp.Body, req.ID)
	default:
		return nil, failure(ClassProtocolError, "unexpected content type %s (want application/json or text/event-stream)", contract.QuoteForDisplay(contract.TruncateBytes(mt, 80)))
	}
}

// readStream reads a POST's SSE stream until the response to id, passing
// anything else (progress, logging, server requests) to the inbox.
func (c *streamableConn) readStream(ctx context.Context, body io.Reader, id jsonrpc.ID) (*jsonrpc.Response, error) {
	sr := newSSEReader(body, c.rt.opts.MaxEventBytes)
	for {
		ev, err := sr.next()
		if err == io.EOF {
			return nil, failure(ClassProtocolError, "the SSE stream ended without a response")
		}
		if err != nil {
			return nil, c.networkError(ctx, err)
		}
		if ev.name != "" && ev.name != "message" {
			continue
		}
		msg, err := decodeMessage(ev.data)
		if err != nil {
			return nil, err
		}
		if r, ok := msg.(*jsonrpc.Response); ok && answers(r, id) {
			return r, nil
		}
		c.in(msg)
	}
}

// send posts a notification or a response; the server accepts it with 202.
func (c *streamableConn) send(ctx context.Context, msg jsonrpc.Message, method string) error {
	resp, err := c.post(ctx, msg, method)
	if err != nil {
		return err
	}
	return c.accepted(ctx, resp)
}

func (c *streamableConn) notify(ctx context.Context, n *jsonrpc.Request) error {
	return c.send(ctx, n, n.Method)
}

func (c *streamableConn) reply(ctx context.Context, r *jsonrpc.Response) error {
	return c.send(ctx, r, "")
}

// listen opens the standalone GET stream an initialize-era server may offer
// (for list_changed and server requests). Best effort: a server without one
// answers 405, and any failure only means notifications are not heard.
func (c *streamableConn) listen() {
	c.mu.Lock()
	if c.closed || c.modern {
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	version, sid := c.version, c.sessionID
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		req, err := c.newRequest(c.bg, http.MethodGet, c.endpoint, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		if version != "" {
			req.Header.Set(headerProtocolVersion, version)
		}
		if sid != "" {
			req.Header.Set(headerSessionID, sid)
		}
		resp, err := c.do(c.bg, req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || mediaType(resp.Header) != "text/event-stream" {
			c.rt.opts.Logger.Debug("no standalone SSE stream", "status", resp.StatusCode)
			return
		}
		sr := newSSEReader(resp.Body, c.rt.opts.MaxEventBytes)
		for {
			ev, err := sr.next()
			if err != nil {
				return
			}
			if ev.name != "" && ev.name != "message" {
				continue
			}
			if msg, err := decodeMessage(ev.data); err == nil {
				c.in(msg)
			}
		}
	}()
}

// close stops the standalone stream and ends an initialize-era session with
// DELETE (best effort, bounded), so probes do not pile up server sessions.
func (c *streamableConn) close(hurry bool) {
	c.mu.Lock()
	c.closed = true
	sid, version := c.sessionID, c.version
	c.mu.Unlock()
	c.stop()
	c.wg.Wait()
	if sid != "" && !hurry {
		// The probe's values, not its cancellation (it may be over): a
		// caller's httptrace (the receiver's withOwnConnections) then sees
		// the connection the DELETE uses and closes it, where one from a
		// bare context stayed idle in the caller's client, a keep-alive
		// goroutine nobody closed (goleak, under load).
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.bg), closeTimeout)
		if req, err := c.newRequest(ctx, http.MethodDelete, c.endpoint, nil); err == nil {
			req.Header.Set(headerSessionID, sid)
			if version != "" {
				req.Header.Set(headerProtocolVersion, version)
			}
			if resp, err := c.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	c.release()
}
