package probe

import (
	"bufio"
	"bytes"
	"io"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	name string // "" means "message"
	data []byte
}

// sseReader reads server-sent events (WHATWG HTML, "event stream
// interpretation") with a bound on the size of one event. Hand-written
// because the go-sdk's SSE scanner is unexported and the probe needs a typed
// size error; it handles CRLF, LF and CR line ends, several data lines per
// event, comments, and events without data (priming events), which are
// skipped.
type sseReader struct {
	br        *bufio.Reader
	max       int
	line      []byte
	pendingCR bool // the last line ended with CR: an LF right after it belongs to it
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, 32<<10), max: maxEvent}
}

func errEventTooLarge(max int) error {
	return failure(ClassTooLarge, "a server-sent event exceeded the limit of %d bytes", max)
}

// next returns the next event that carries data (events without data, such
// as the priming events of resumable streams, are skipped).
func (r *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data bytes.Buffer
	hasData := false
	for {
		line, err := r.readLine(max(r.max-data.Len(), 0))
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 { // blank line: dispatch; empty data is a priming event
			if hasData && data.Len() > 0 {
				ev.data = data.Bytes()
				return ev, nil
			}
			ev, hasData = sseEvent{}, false
			data.Reset()
			continue
		}
		if line[0] == ':' { // comment, e.g. a keep-alive
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
		// id and retry are ignored: the probe never resumes a stream.
	}
}

// readLine returns the next line without its end (CRLF, LF or CR), failing
// once a line exceeds room bytes. An unterminated last line before EOF is
// returned; EOF right after a line end is io.EOF.
func (r *sseReader) readLine(room int) ([]byte, error) {
	r.line = r.line[:0]
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if err == io.EOF && len(r.line) > 0 {
					return r.line, nil
				}
				return nil, err
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		if r.pendingCR {
			r.pendingCR = false
			if buf[0] == '\n' {
				_, _ = r.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		n := i
		if i < 0 {
			n = len(buf)
		}
		if len(r.line)+n > room {
			return nil, errEventTooLarge(r.max)
		}
		r.line = append(r.line, buf[:n]...)
		if i < 0 {
			_, _ = r.br.Discard(n)
			continue
		}
		r.pendingCR = buf[i] == '\r'
		_, _ = r.br.Discard(i + 1)
		return r.line, nil
	}
}
