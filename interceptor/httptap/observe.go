package httptap

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// observe wraps resp.Body so the session sees the messages in it as the
// client reads them. failIDs are requests to fail with status once the body
// ends (an HTTP error: they will get no response). legacyBase is the URL of a
// legacy SSE connection's GET (its endpoint event is relative to it), or "".
func (t *Transport) observe(resp *http.Response, sess *interceptor.Session, status error, failIDs []interceptor.ID, legacyBase string) {
	limit := t.ic.Limits().MaxDocumentBytes
	failRest := func() {
		for _, id := range failIDs {
			sess.Fail(id, status)
		}
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		failRest()
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream":
		p := &sseParser{max: limit}
		p.dispatch = func(event string, data []byte) {
			switch event {
			case "endpoint":
				if legacyBase != "" {
					if ep, err := resp.Request.URL.Parse(string(data)); err == nil {
						t.bindEndpoint(ep.String(), sess)
					}
				}
			case "", "message":
				if len(bytes.TrimSpace(data)) > 0 { // empty data: a priming event
					sess.ReceiveFrame(data)
				}
			}
		}
		resp.Body = &observedBody{rc: resp.Body, ic: t.ic, onData: p.feed, onEnd: func(bool) {
			failRest()
			if legacyBase != "" {
				t.forget(sess) // the legacy connection is its stream
			}
		}}
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
				if eof && !over && len(buf) > 0 {
					sess.ReceiveFrame(buf)
				}
				failRest()
			}}
	default:
		failRest()
	}
}

// observedBody passes a response body through unchanged, showing each chunk
// to onData as the client reads it and calling onEnd once, at EOF (true) or
// on a read error or Close (false).
type observedBody struct {
	rc     io.ReadCloser
	ic     *interceptor.Interceptor
	onData func([]byte)
	onEnd  func(eof bool)

	mu    sync.Mutex // Read and Close may race (a stream aborted from another goroutine)
	ended bool
}

func (b *observedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > 0 && !b.ended {
		b.ic.Protect(func() { b.onData(p[:n]) })
	}
	if err != nil {
		b.endLocked(err == io.EOF)
	}
	return n, err
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
