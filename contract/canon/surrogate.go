package canon

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// canonicalizeSurrogates is an RFC 8785 canonicalizer that keeps strings as
// UTF-16 code units, so an unpaired surrogate survives to the output, where it
// is written as a lowercase \u escape. It is used only for documents that
// contain surrogate escapes; jsontext handles everything else. It checks what
// jsontext checks: one value, no repeated member names, valid UTF-8, no
// trailing data, numbers within double range.
func canonicalizeSurrogates(dst, raw []byte, maxDepth int) ([]byte, error) {
	p := &surrogateParser{src: raw, maxDepth: maxDepth}
	p.skipSpace()
	out, err := p.value(dst, 0)
	if err != nil {
		return dst, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return dst, p.fail(ErrSyntax, "data after the top-level value")
	}
	return out, nil
}

type surrogateParser struct {
	src      []byte
	pos      int
	maxDepth int
}

func (p *surrogateParser) fail(base error, detail string) error {
	return &positionError{Offset: int64(p.pos), Err: &detailError{base: base, detail: fmt.Errorf("%s", detail)}}
}

func (p *surrogateParser) skipSpace() { p.pos = jsonwire.SkipSpace(p.src, p.pos) }

func (p *surrogateParser) value(dst []byte, depth int) ([]byte, error) {
	if p.pos >= len(p.src) {
		return dst, p.fail(ErrSyntax, "unexpected end of input")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(dst, depth+1)
	case c == '[':
		return p.array(dst, depth+1)
	case c == '"':
		units, err := p.stringUnits()
		if err != nil {
			return dst, err
		}
		return appendUnits(dst, units), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number(dst)
	default:
		end, lit, ok := jsonwire.Literal(p.src, p.pos)
		if !ok {
			return dst, p.fail(ErrSyntax, "invalid character at start of value")
		}
		p.pos = end
		return append(dst, lit...), nil
	}
}

// next reads what follows an object's member or an array's element: a
// comma (more to come) or the closing byte.
func (p *surrogateParser) next(closer byte, container, item string) (more bool, err error) {
	end, more, ok := jsonwire.Sep(p.src, p.pos, closer)
	p.pos = end
	switch {
	case ok:
		return more, nil
	case end >= len(p.src):
		return false, p.fail(ErrSyntax, "unexpected end of "+container)
	}
	return false, p.fail(ErrSyntax, "expected ',' or '"+string(closer)+"' after "+item)
}

type member struct {
	name  []uint16
	value []byte // canonical "name":value, ready to append
}

func (p *surrogateParser) object(dst []byte, depth int) ([]byte, error) {
	if depth > p.maxDepth {
		return dst, p.fail(ErrTooDeep, "nesting too deep")
	}
	p.pos++ // '{'
	var members []member
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		return append(dst, "{}"...), nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return dst, p.fail(ErrSyntax, "expected member name")
		}
		name, err := p.stringUnits()
		if err != nil {
			return dst, err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return dst, p.fail(ErrSyntax, "expected ':' after member name")
		}
		p.pos++
		p.skipSpace()
		enc := appendUnits(nil, name)
		enc = append(enc, ':')
		if enc, err = p.value(enc, depth); err != nil {
			return dst, err
		}
		members = append(members, member{name: name, value: enc})
		more, err := p.next('}', "object", "member")
		if err != nil {
			return dst, err
		}
		if more {
			continue
		}
		break
	}
	// RFC 8785 3.2.3: sort by UTF-16 code units; equal names are duplicates.
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.name, b.name) })
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			if slices.Equal(members[i-1].name, m.name) {
				return dst, &positionError{Offset: int64(p.pos), Err: fmt.Errorf("%w %s", ErrDuplicateName, appendUnits(nil, m.name))}
			}
			dst = append(dst, ',')
		}
		dst = append(dst, m.value...)
	}
	return append(dst, '}'), nil
}

func (p *surrogateParser) array(dst []byte, depth int) ([]byte, error) {
	if depth > p.maxDepth {
		return dst, p.fail(ErrTooDeep, "nesting too deep")
	}
	p.pos++ // '['
	dst = append(dst, '[')
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		return append(dst, ']'), nil
	}
	for first := true; ; first = false {
		if !first {
			dst = append(dst, ',')
		}
		p.skipSpace()
		var err error
		if dst, err = p.value(dst, depth); err != nil {
			return dst, err
		}
		more, err := p.next(']', "array", "element")
		if err != nil {
			return dst, err
		}
		if more {
			continue
		}
		return append(dst, ']'), nil
	}
}

// stringUnits decodes the string at p.pos into UTF-16 code units, keeping
// unpaired surrogates from \u escapes as they are.
func (p *surrogateParser) stringUnits() ([]uint16, error) {
	p.pos++ // opening quote
	var units []uint16
	for {
		if p.pos >= len(p.src) {
			return nil, p.fail(ErrSyntax, "unterminated string")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return units, nil
		case c < 0x20:
			return nil, p.fail(ErrSyntax, "control character in string")
		case c == '\\':
			if p.pos+1 >= len(p.src) {
				return nil, p.fail(ErrSyntax, "unterminated escape")
			}
			e := p.src[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/':
				units = append(units, uint16(e))
			case 'b':
				units = append(units, '\b')
			case 'f':
				units = append(units, '\f')
			case 'n':
				units = append(units, '\n')
			case 'r':
				units = append(units, '\r')
			case 't':
				units = append(units, '\t')
			case 'u':
				if p.pos+4 > len(p.src) {
					return nil, p.fail(ErrSyntax, "short \\u escape")
				}
				v, err := strconv.ParseUint(string(p.src[p.pos:p.pos+4]), 16, 16)
				if err != nil || !isHex4(p.src[p.pos:p.pos+4]) {
					return nil, p.fail(ErrSyntax, "invalid \\u escape")
				}
				units = append(units, uint16(v))
				p.pos += 4
			default:
				return nil, p.fail(ErrSyntax, "invalid escape")
			}
		case c < utf8.RuneSelf:
			units = append(units, uint16(c))
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, p.fail(ErrInvalidUTF8, "invalid UTF-8 in string")
			}
			units = utf16.AppendRune(units, r)
			p.pos += size
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// appendUnits writes UTF-16 units as an RFC 8785 string: paired surrogates as
// the UTF-8 of their code point, unpaired ones as lowercase \u escapes.
func appendUnits(dst []byte, units []uint16) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case u == '"':
			dst = append(dst, `\"`...)
		case u == '\\':
			dst = append(dst, `\\`...)
		case u == '\b':
			dst = append(dst, `\b`...)
		case u == '\t':
			dst = append(dst, `\t`...)
		case u == '\n':
			dst = append(dst, `\n`...)
		case u == '\f':
			dst = append(dst, `\f`...)
		case u == '\r':
			dst = append(dst, `\r`...)
		case u < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[u>>4], hexDigits[u&0xf])
		case utf16.IsSurrogate(rune(u)):
			if u < 0xdc00 && i+1 < len(units) && units[i+1] >= 0xdc00 && units[i+1] <= 0xdfff {
				dst = utf8.AppendRune(dst, utf16.DecodeRune(rune(u), rune(units[i+1])))
				i++
				continue
			}
			dst = append(dst, '\\', 'u', hexDigits[u>>12], hexDigits[u>>8&0xf], hexDigits[u>>4&0xf], hexDigits[u&0xf])
		default:
			dst = utf8.AppendRune(dst, rune(u))
		}
	}
	return append(dst, '"')
}

func (p *surrogateParser) number(dst []byte) ([]byte, error) {
	start := p.pos
	end, ok := jsonwire.Number(p.src, start)
	p.pos = end
	if !ok {
		return dst, p.fail(ErrSyntax, "invalid number")
	}
	f, err := strconv.ParseFloat(string(p.src[start:end]), 64)
	if math.IsInf(f, 0) || err != nil && !errors.Is(err, strconv.ErrRange) {
		return dst, p.fail(ErrNumberRange, "number out of range")
	}
	return appendES6Number(dst, f), nil
}

// appendES6Number writes f as ECMAScript's Number.prototype.toString does
// (RFC 8785 section 3.2.2.3): the shortest round-trip digits, laid out in
// plain notation for exponents in [-7, 21) and as d.ddde±x otherwise.
func appendES6Number(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // also -0
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±xx
	ep := bytes.IndexByte(e, 'e')
	mant := e[:ep]
	exp, _ := strconv.Atoi(string(e[ep+1:]))
	var digits []byte
	digits = append(digits, mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...)
	}
	k := len(digits)
	n := exp + 1 // position of the decimal point relative to the digits
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
