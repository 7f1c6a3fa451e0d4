package httptap

import "bytes"

// sseParser parses a text/event-stream incrementally, as the client reads
// it: each chunk is fed as it passes through, an event is dispatched when
// its blank line arrives, and nothing is buffered beyond the current line
// and event. It is hand-written because the SSE readers in the SDKs are
// internal and consume the body themselves, while a tap must only watch the
// bytes go by (long-lived streams never end, so the body cannot be read
// whole).
//
// Framing follows the HTML standard: lines end with CRLF, LF or CR (a CRLF
// split across chunks is one terminator), "data" lines accumulate joined by
// LF, "event" names the event, lines starting with ':' are comments, and an
// event with no data (a "priming" event) is not dispatched.
type sseParser struct {
	max      int // bound on one line and on one event's data; larger events are dropped
	line     []byte
	data     []byte
	event    string
	hasData  bool
	tooLarge bool
	afterCR  bool
	dispatch func(event string, data []byte)
}

func (p *sseParser) feed(b []byte) {
	for len(b) > 0 {
		if p.afterCR {
			p.afterCR = false
			if b[0] == '\n' {
				b = b[1:]
				continue
			}
		}
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.appendLine(b)
			return
		}
		p.appendLine(b[:i])
		p.afterCR = b[i] == '\r'
		b = b[i+1:]
		p.endLine()
	}
}

func (p *sseParser) appendLine(b []byte) {
	if len(p.line)+len(b) > p.max {
		p.tooLarge = true
		return
	}
	p.line = append(p.line, b...)
}

func (p *sseParser) endLine() {
	line := p.line
	p.line = p.line[:0]
	if len(line) == 0 {
		p.endEvent()
		return
	}
	if line[0] == ':' || p.tooLarge {
		return // a comment, or part of an event that is being dropped
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if len(p.data)+len(value)+1 > p.max {
			p.tooLarge = true
			return
		}
		if p.hasData {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, value...)
		p.hasData = true
	case "event":
		p.event = string(value)
	}
}

func (p *sseParser) endEvent() {
	if p.hasData && !p.tooLarge {
		// A fresh copy: the session may keep references into the frame.
		p.dispatch(p.event, bytes.Clone(p.data))
	}
	p.data, p.event, p.hasData, p.tooLarge = p.data[:0], "", false, false
}
