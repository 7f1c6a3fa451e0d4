package probe

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
)

// sseConn speaks the deprecated HTTP+SSE transport of 2024-11-05: a GET
// opens an event stream whose first event, "endpoint", names the URL to
// POST messages to; every server message (responses included) arrives on
// the stream. Hand-written for the same reasons as streamableConn, and
// because the endpoint URL must be checked to stay on the server's origin
// before the configured headers are sent to it.
type sseConn struct {
	*httpBase
	messageStream
	postURL  *url.URL
	stop     context.CancelFunc
	wg       sync.WaitGroup
	closeOne sync.Once
}

// dialSSE opens the event stream and waits (at most RequestTimeout) for the
// endpoint event.
func dialSSE(ctx context.Context, base *httpBase, in inbox) (*sseConn, error) {
	streamCtx, stop := context.WithCancel(ctx)
	c := &sseConn{httpBase: base, stop: stop}
	c.messageStream = messageStream{dm: newDemux(in), write: c.send}
	req, err := c.newRequest(streamCtx, http.MethodGet, c.endpoint, nil)
	if err != nil {
		stop()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.do(streamCtx, req)
	if err != nil {
		stop()
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		stop()
		return nil, c.statusErr(ctx, resp)
	}
	if mt := mediaType(resp.Header); mt != "text/event-stream" {
		resp.Body.Close()
		stop()
		return nil, failure(ClassProtocolError, "the SSE endpoint answered %s, not text/event-stream", contract.QuoteForDisplay(contract.TruncateBytes(mt, 80)))
	}
	sr := newSSEReader(resp.Body, c.rt.opts.MaxEventBytes)
	endpoint := make(chan error, 1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer resp.Body.Close()
		endpoint <- c.readEndpoint(sr)
		c.readLoop(streamCtx, sr)
	}()
	timer, cancel := context.WithTimeout(ctx, c.rt.opts.RequestTimeout)
	defer cancel()
	select {
	case err = <-endpoint:
	case <-timer.Done():
		err = &Error{Class: ClassTimeout, Err: errors.New("no endpoint event on the SSE stream")}
	}
	if err != nil {
		c.close(true)
		return nil, err
	}
	return c, nil
}

// readEndpoint reads the stream's first event, which must be "endpoint".
func (c *sseConn) readEndpoint(sr *sseReader) error {
	ev, err := sr.next()
	if err != nil {
		if err == io.EOF {
			return failure(ClassProtocolError, "the SSE stream ended before the endpoint event")
		}
		return c.networkError(context.Background(), err)
	}
	if ev.name != "endpoint" {
		return failure(ClassProtocolError, "the first SSE event is %s, not endpoint", contract.QuoteForDisplay(contract.TruncateBytes(ev.name, 40)))
	}
	ref, err := url.Parse(string(bytes.TrimSpace(ev.data)))
	if err != nil {
		return failure(ClassProtocolError, "the endpoint event holds no URL")
	}
	u := c.endpoint.ResolveReference(ref)
	if u.Scheme != c.endpoint.Scheme || u.Host != c.endpoint.Host {
		return failure(ClassProtocolError, "the endpoint event points to another origin (%s); the probe will not send its headers there", serverid.Display(u.String()))
	}
	c.postURL = u
	return nil
}

// readLoop delivers every later event until the stream ends.
func (c *sseConn) readLoop(ctx context.Context, sr *sseReader) {
	for {
		ev, err := sr.next()
		if err != nil {
			if err == io.EOF {
				err = failure(ClassUnreachable, "the server closed the SSE stream")
			} else {
				err = c.networkError(ctx, err)
			}
			c.dm.fail(err)
			return
		}
		if ev.name != "" && ev.name != "message" {
			continue
		}
		msg, err := decodeMessage(ev.data)
		if err != nil {
			c.dm.fail(err)
			return
		}
		c.dm.deliver(msg)
	}
}

func (c *sseConn) transport() string { return contract.TransportSSE }

func (c *sseConn) negotiated(string, bool) {}

// send posts one message to the endpoint; the answer comes on the stream.
func (c *sseConn) send(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return failure(ClassProtocolError, "encoding message: %v", err)
	}
	req, err := c.newRequest(ctx, http.MethodPost, c.postURL, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.do(ctx, req)
	if err != nil {
		return err
	}
	return c.accepted(ctx, resp)
}

// close ends the stream (which ends the server's session) and waits for
// the reader.
func (c *sseConn) close(bool) {
	c.closeOne.Do(func() {
		c.stop()
		c.wg.Wait()
		c.dm.fail(&Error{Class: ClassUnreachable, Err: errClosed})
		c.release()
	})
}
