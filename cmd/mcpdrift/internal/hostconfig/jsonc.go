package hostconfig

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// The parser below reads JSON, plus the comments and trailing commas of
// VS Code's JSONC, into a tree that remembers where every value starts and
// ends in the source. Edits splice new text into those byte ranges, so
// everything a rewrite does not touch (formatting, comments, members we do
// not know) stays byte for byte as it was.

// maxDepth bounds nesting: configuration files are shallow, and a deep file
// is refused rather than recursed into.
const maxDepth = 64

// Node is one JSON value and where it lies in the source.
type Node struct {
	Kind       byte // '{', '[', '"', '0' (number), 't', 'f', 'n'
	Start, End int  // byte range of the value in the source
	Members    []Member
	Elems      []*Node
	Str        string // the decoded value of a string
}

// Member is one member of an object.
type Member struct {
	Key      string
	KeyStart int // offset of the key's opening quote
	Value    *Node
}

// Get returns the value of the last member named key (JSON.parse keeps the
// last of repeated names), or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != '{' {
		return nil
	}
	for i := len(n.Members) - 1; i >= 0; i-- {
		if n.Members[i].Key == key {
			return n.Members[i].Value
		}
	}
	return nil
}

// SyntaxError is a parse error with its position, counted as editors count
// (line and column from 1, the column in characters).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// Position returns the line and column of a byte offset in src.
func Position(src []byte, off int) (line, col int) {
	line, start := 1, 0
	for i := 0; i < off && i < len(src); i++ {
		if src[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, utf8.RuneCount(src[start:min(off, len(src))]) + 1
}

type parser struct {
	src       []byte
	pos       int
	comments  bool // whether the source had a comment or a trailing comma
	lastComma bool // whether the last member or element was followed by a comma
}

// Parse parses one JSON (or JSONC) value filling the whole source, after an
// optional UTF-8 byte order mark. HasJSONC reports whether it used comments
// or trailing commas.
func Parse(src []byte) (root *Node, hasJSONC bool, err error) {
	if !utf8.Valid(src) {
		off := 0
		for off < len(src) {
			r, n := utf8.DecodeRune(src[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, false, errAt(src, off, "the file is not UTF-8")
	}
	p := &parser{src: src}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		p.pos = 3
	}
	if err := p.space(); err != nil {
		return nil, false, err
	}
	root, err = p.value(0)
	if err != nil {
		return nil, false, err
	}
	if err := p.space(); err != nil {
		return nil, false, err
	}
	if p.pos < len(src) {
		return nil, false, p.errorf("unexpected %s after the end of the document", p.describe())
	}
	return root, p.comments, nil
}

func errAt(src []byte, off int, msg string) *SyntaxError {
	line, col := Position(src, off)
	return &SyntaxError{Line: line, Col: col, Msg: msg}
}

func (p *parser) errorf(format string, args ...any) error {
	return errAt(p.src, p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) describe() string {
	if p.pos >= len(p.src) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.src[p.pos:])
	return fmt.Sprintf("%q", r)
}

// space skips whitespace and comments.
func (p *parser) space() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			p.comments = true
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			p.comments = true
			start := p.pos
			p.pos += 2
			for {
				if p.pos+1 >= len(p.src) {
					p.pos = start
					return p.errorf("a comment that never ends")
				}
				if p.src[p.pos] == '*' && p.src[p.pos+1] == '/' {
					p.pos += 2
					break
				}
				p.pos++
			}
		default:
			return nil
		}
	}
	return nil
}

func (p *parser) value(depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested deeper than %d levels", maxDepth)
	}
	if p.pos >= len(p.src) {
		return nil, p.errorf("unexpected end of file, expected a value")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", 't')
	case c == 'f':
		return p.literal("false", 'f')
	case c == 'n':
		return p.literal("null", 'n')
	}
	return nil, p.errorf("unexpected %s, expected a value", p.describe())
}

func (p *parser) object(depth int) (*Node, error) {
	n := &Node{Kind: '{', Start: p.pos}
	return p.items(n, '}', func() error {
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return p.errorf("unexpected %s, expected a member name in double quotes", p.describe())
		}
		keyStart := p.pos
		key, err := p.str()
		if err != nil {
			return err
		}
		if err := p.space(); err != nil {
			return err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return p.errorf("unexpected %s, expected ':' after the member name", p.describe())
		}
		p.pos++
		if err := p.space(); err != nil {
			return err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		n.Members = append(n.Members, Member{Key: key.Str, KeyStart: keyStart, Value: v})
		return nil
	})
}

func (p *parser) array(depth int) (*Node, error) {
	n := &Node{Kind: '[', Start: p.pos}
	return p.items(n, ']', func() error {
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		n.Elems = append(n.Elems, v)
		return nil
	})
}

// items parses what an object or array holds, one item at a time, up to
// its closing bracket; a comma after the last item is JSONC.
func (p *parser) items(n *Node, closing byte, item func() error) (*Node, error) {
	p.pos++
	for count := 0; ; count++ {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == closing {
			if count > 0 && p.lastComma {
				p.comments = true
			}
			p.pos++
			n.End = p.pos
			p.lastComma = false
			return n, nil
		}
		if count > 0 && !p.lastComma {
			return nil, p.errorf("unexpected %s, expected ',' or '%c'", p.describe(), closing)
		}
		if err := item(); err != nil {
			return nil, err
		}
		if err := p.comma(); err != nil {
			return nil, err
		}
	}
}

// comma consumes the comma after a member or element, if there is one.
func (p *parser) comma() error {
	if err := p.space(); err != nil {
		return err
	}
	p.lastComma = p.pos < len(p.src) && p.src[p.pos] == ','
	if p.lastComma {
		p.pos++
	}
	return nil
}

func (p *parser) str() (*Node, error) {
	n := &Node{Kind: '"', Start: p.pos}
	i := p.pos + 1
	for ; i < len(p.src) && p.src[i] != '"'; i++ {
		switch c := p.src[i]; {
		case c == '\\':
			i++
		case c < 0x20:
			p.pos = i
			return nil, p.errorf("a control character inside a string (a line break must be written \\n)")
		}
	}
	if i >= len(p.src) {
		return nil, p.errorf("a string that never ends")
	}
	n.End = i + 1
	if err := json.Unmarshal(p.src[n.Start:n.End], &n.Str); err != nil {
		return nil, p.errorf("an invalid escape in a string")
	}
	p.pos = n.End
	return n, nil
}

func (p *parser) number() (*Node, error) {
	n := &Node{Kind: '0', Start: p.pos}
	i := p.pos
	digits := func() bool {
		start := i
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
		return i > start
	}
	if p.src[i] == '-' {
		i++
	}
	switch {
	case i < len(p.src) && p.src[i] == '0':
		i++
	case !digits():
		p.pos = i
		return nil, p.errorf("an invalid number")
	}
	if i < len(p.src) && p.src[i] == '.' {
		i++
		if !digits() {
			p.pos = i
			return nil, p.errorf("an invalid number: digits must follow '.'")
		}
	}
	if i < len(p.src) && (p.src[i] == 'e' || p.src[i] == 'E') {
		i++
		if i < len(p.src) && (p.src[i] == '+' || p.src[i] == '-') {
			i++
		}
		if !digits() {
			p.pos = i
			return nil, p.errorf("an invalid number: digits must follow the exponent")
		}
	}
	n.End, p.pos = i, i
	return n, nil
}

func (p *parser) literal(word string, kind byte) (*Node, error) {
	if len(p.src)-p.pos < len(word) || string(p.src[p.pos:p.pos+len(word)]) != word {
		return nil, p.errorf("unexpected %s, expected a value", p.describe())
	}
	n := &Node{Kind: kind, Start: p.pos, End: p.pos + len(word)}
	p.pos = n.End
	return n, nil
}
