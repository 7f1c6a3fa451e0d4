package relay

import (
	"bytes"
	"io"
	"sync"
)

// lineReader reads newline-delimited frames (stdio MCP). A frame up to max
// bytes comes whole, without its newline; a longer one comes in pieces
// (over is set on each), to be relayed unparsed as they arrive. Its buffer
// starts small and grows with the frames up to max+1 bytes, so a proxy
// pays for the frames it sees, not for the limit.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int // buf[start:end] is read and not yet returned
	scanned    int // buf[start:start+scanned] holds no newline
	max        int
	err        error
}

// lineBufferSize is a line reader's first buffer, and the size it returns
// to after a large frame.
const lineBufferSize = 64 << 10

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: r, buf: make([]byte, min(lineBufferSize, max+1)), max: max}
}

// next returns the next frame or piece. The bytes are valid until the next
// call. last is false while an oversized frame has more to come.
func (l *lineReader) next() (b []byte, over, last bool, err error) {
	if l.start == l.end && len(l.buf) > 16*lineBufferSize {
		l.buf, l.start, l.end = make([]byte, lineBufferSize), 0, 0 // do not keep a huge frame's buffer (max+1 > it here)
	}
	for {
		if i := bytes.IndexByte(l.buf[l.start+l.scanned:l.end], '\n'); i >= 0 {
			i += l.start + l.scanned
			b = l.buf[l.start:i]
			l.start, l.scanned = i+1, 0
			return b, false, true, nil
		}
		l.scanned = l.end - l.start
		if l.scanned > l.max {
			b = l.buf[l.start:l.end]
			l.start, l.end, l.scanned = 0, 0, 0
			return b, true, false, nil
		}
		if l.err != nil {
			if l.start < l.end {
				b = l.buf[l.start:l.end] // a last frame without its newline
				l.start, l.scanned = l.end, 0
				return b, false, true, nil
			}
			return nil, false, true, l.err
		}
		l.fill()
	}
}

// fill reads more, first making room: the pending bytes move to the front,
// and the buffer doubles (up to max+1) when they fill it.
func (l *lineReader) fill() {
	if l.start > 0 {
		l.end = copy(l.buf, l.buf[l.start:l.end])
		l.start = 0
	}
	if l.end == len(l.buf) {
		grown := make([]byte, min(2*len(l.buf), l.max+1))
		l.end = copy(grown, l.buf[:l.end])
		l.buf = grown
	}
	n, err := l.r.Read(l.buf[l.end:])
	l.end += n
	if err != nil {
		l.err = err
	} else if n == 0 {
		l.err = io.ErrNoProgress
	}
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
