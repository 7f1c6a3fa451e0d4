package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// lineReader reads newline-delimited frames (stdio MCP). A frame up to max
// bytes comes whole, without its newline; a longer one comes in pieces
// (over is set on each), to be relayed unparsed as they arrive.
type lineReader struct {
	r *bufio.Reader
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, max+1)}
}

// next returns the next frame or piece. The bytes are valid until the next
// call. last is false while an oversized frame has more to come.
func (l *lineReader) next() (b []byte, over, last bool, err error) {
	b, err = l.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return b, true, false, nil
	case err == nil:
		return b[:len(b)-1], false, true, nil
	case len(b) > 0 && err == io.EOF:
		return b, false, true, nil // a last frame without its newline
	}
	return nil, false, true, err
}

// lineWriter writes frames to the agent, one at a time: the relay's server
// reader, the gate's refusals and the proxy's own notifications share it.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte // a frame and its newline, written at once (one syscall)
	err error
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{w: w} }

// frame writes one whole frame and its newline.
func (l *lineWriter) frame(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writeLocked(b, true)
}

// piece writes part of an oversized frame; the last piece ends it.
func (l *lineWriter) piece(b []byte, last bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writeLocked(b, last && !bytes.HasSuffix(b, []byte{'\n'}))
}

func (l *lineWriter) writeLocked(b []byte, newline bool) error {
	if l.err != nil {
		return l.err
	}
	if newline {
		l.buf = append(append(l.buf[:0], b...), '\n')
		b = l.buf
		if cap(l.buf) > 1<<20 {
			defer func() { l.buf = nil }() // do not keep a huge frame's buffer
		}
	}
	_, l.err = l.w.Write(b)
	return l.err
}
