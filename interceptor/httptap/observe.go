package httptap

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/sse"
)

// exchange is what the tap knows about one HTTP exchange when its response
// arrives.
type exchange struct {
	sess *interceptor.Session
	// requests are the JSON-RPC requests the POST carried (none for a GET).
	requests []interceptor.ID
	// failed is set when the HTTP status says the exchange failed: the
	// requests end with it once the body is read, unless it answered them.
	failed *statusError
	// legacyBase is the URL of a legacy SSE connection's GET (its endpoint
	// event is relative to it), or "".
	legacyBase string
}

// observe wraps resp.Body so the session sees the messages in it as the
// client reads them.
func (t *Transport) observe(resp *http.Response, x exchange) {
	limit := t.ic.Limits().MaxDocumentBytes
	end := func() {
		if x.failed != nil {
			for _, id := range x.requests {
				x.sess.Fail(id, x.failed) // no-op for requests the body answered
			}
		}
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		end()
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream":
		p := &sse.Parser{Max: limit}
		p.Dispatch = func(ev sse.Event) {
			switch ev.Name {
			case "endpoint":
				if x.legacyBase != "" {
					if ep, err := resp.Request.URL.Parse(string(ev.Data)); err == nil {
						t.bindEndpoint(ep.String(), x.sess)
					}
				}
			case "", "message":
				if len(bytes.TrimSpace(ev.Data)) > 0 { // empty data: a priming event
					x.sess.ReceiveFrame(ev.Data)
				}
			}
		}
		b := &observedBody{rc: resp.Body, ic: t.ic, onData: p.Feed, onEnd: func(bool) {
			end()
			if x.legacyBase != "" {
				t.forget(x.sess) // the legacy connection is its stream
			}
		}}
		if len(x.requests) > 0 {
			b.awaiting = func() bool {
				for _, id := range x.requests {
					if x.sess.Awaiting(id) {
						return true
					}
				}
				return false
			}
			b.open = true
		}
		resp.Body = b
	case "application/json":
		var buf []byte
		if n := resp.ContentLength; n > 0 && n <= int64(limit) {
			buf = make([]byte, 0, n)
		}
		over := false
		resp.Body = &observedBody{rc: resp.Body, ic: t.ic,
			onData: func(b []byte) {
				if over || len(buf)+len(b) > limit {
					over, buf = true, nil
					return
				}
				buf = append(buf, b...)
			},
			onEnd: func(eof bool) {
				switch {
				case eof && over && x.failed == nil:
					// Answered, but too large to read: the requests end as
					// answered with results unknown (a listing is uncached).
					for _, id := range x.requests {
						x.sess.Response(id, nil, nil)
					}
				case eof && len(buf) > 0:
					x.sess.ReceiveFrame(buf)
				}
				end()
			}}
	default:
		end()
	}
}

// Answered is implemented by the bodies of the event streams the Transport
// returns for POSTs of requests: Answered reports whether the last Read
// delivered the last of the answers the POST waits for. A server ends the
// stream after it, so a proxy relaying the body can send that answer on with
// the stream's end rather than on its own.
type Answered interface {
	Answered() bool
}

// observedBody passes a response body through unchanged, showing each chunk
// to onData as the client reads it and calling onEnd once, at EOF (true) or
// on a read error or Close (false).
type observedBody struct {
	rc     io.ReadCloser
	ic     *interceptor.Interceptor
	onData func([]byte)
	onEnd  func(eof bool)
	// awaiting reports whether a request of the POST still waits for its
	// answer (nil: no requests, or not an event stream).
	awaiting func() bool

	mu       sync.Mutex // Read and Close may race (a stream aborted from another goroutine)
	ended    bool
	open     bool // some request was still waiting before the last Read
	answered bool // the last Read brought the last answer
}

func (b *observedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answered = false
	if n > 0 && !b.ended {
		b.ic.Protect(func() { b.onData(p[:n]) })
		if b.open && !b.awaiting() {
			b.open, b.answered = false, true
		}
	}
	if err != nil {
		b.endLocked(err == io.EOF)
	}
	return n, err
}

// Answered implements Answered.
func (b *observedBody) Answered() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.answered
}

func (b *observedBody) Close() error {
	err := b.rc.Close()
	b.mu.Lock()
	b.endLocked(false)
	b.mu.Unlock()
	return err
}

func (b *observedBody) endLocked(eof bool) {
	if !b.ended {
		b.ended = true
		b.ic.Protect(func() { b.onEnd(eof) })
	}
}
