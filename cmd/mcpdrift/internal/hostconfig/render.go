package hostconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
)

// layout is how the entry being rewritten is formatted: on one line
// (compact) or one member a line, indented by indent, one level being unit,
// lines ending as the file's do.
type layout struct {
	pretty           bool
	indent, unit, nl string // nl is the file's line break, "\n" or "\r\n"
}

func (l layout) deeper() layout { return layout{l.pretty, l.indent + l.unit, l.unit, l.nl} }

// field is one member to write: its name and its value as JSON text.
type field struct {
	key, val string
}

// object writes fields as a JSON object. Values that span lines must
// already be indented for one level below l.
func (l layout) object(fields []field) string {
	if len(fields) == 0 {
		return "{}"
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
			if !l.pretty {
				b.WriteByte(' ')
			}
		}
		if l.pretty {
			b.WriteString(l.nl + l.indent + l.unit)
		}
		b.WriteString(quote(f.key) + ": " + f.val)
	}
	if l.pretty {
		b.WriteString(l.nl + l.indent)
	}
	b.WriteByte('}')
	return b.String()
}

// array writes JSON texts as an array on one line, as configs write args.
func array(elems []string) string {
	return "[" + strings.Join(elems, ", ") + "]"
}

// quote writes s as a JSON string, leaving <, > and & as they are.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return out
}

// reindent shifts every line after the first of a value's text deeper by
// by (add) or back (remove); the two undo each other, so an entry kept
// inside the wrapped one comes back byte for byte.
func reindent(text, by string, add bool) string {
	if by == "" {
		return text
	}
	if add {
		return strings.ReplaceAll(text, "\n", "\n"+by)
	}
	return strings.ReplaceAll(text, "\n"+by, "\n")
}

// digest is a digest of a value that ignores formatting, comments and member
// order: what unwrap compares to tell a hand edit of a wrapped entry.
func digest(src []byte, n *Node, skip string) string {
	var b bytes.Buffer
	canonical(&b, src, n, skip)
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

func canonical(b *bytes.Buffer, src []byte, n *Node, skip string) {
	switch n.Kind {
	case '{':
		last := map[string]*Node{}
		var keys []string
		for _, m := range n.Members {
			if skip != "" && m.Key == skip {
				continue
			}
			if _, seen := last[m.Key]; !seen {
				keys = append(keys, m.Key)
			}
			last[m.Key] = m.Value
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(k) + ":")
			canonical(b, src, last[k], "")
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, e := range n.Elems {
			if i > 0 {
				b.WriteByte(',')
			}
			canonical(b, src, e, "")
		}
		b.WriteByte(']')
	case '"':
		b.WriteString(quote(n.Str))
	default:
		b.Write(src[n.Start:n.End])
	}
}
