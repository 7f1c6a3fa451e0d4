package proxy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// How --lock reaches what the agent reads. An agent's SDK takes a tool
// listing from any response it gets: from a JSON array (a batch's answer,
// or one a server sends for a lone request), under an id written otherwise
// than its request's ("7" or 7.0 for 7: the TypeScript SDK matches ids with
// Number), from a member whose name differs only in case (clients on
// encoding/json read "Result" as result), and its parser keeps the last of
// two members with one name. So the lock is not applied to "the answer to
// the tools/list request" but to every tools array of every result member
// of every response in the text, and it keeps what it approves rather than
// leaving out what it recognizes: a definition stays only if it hashes
// (strictly: no repeated member, valid UTF-8, within the depth limit) to
// the lock's digest for its name. Text that looks like JSON but cannot be
// walked (malformed, nested deeper than jsonwire.MaxDepth) is not relayed:
// the agent gets a JSON-RPC error instead.

var utf8BOM = []byte("\xef\xbb\xbf")

// lockFrame applies the lock to one JSON text on its way to the agent (a
// stdio frame, an HTTP body, an event's data) and returns the text the
// agent gets: text itself when the lock leaves it as it is. id is the
// request a replacement error answers when the text names none it can read.
func (g *gate) lockFrame(limits contract.Limits, text []byte, id json.RawMessage) []byte {
	if g.lock == nil {
		return text
	}
	body := bytes.TrimPrefix(text, utf8BOM) // clients that decode bytes skip it
	i := jsonwire.SkipSpace(body, 0)
	if i == len(body) || (body[i] != '{' && body[i] != '[') {
		return text // not JSON: no client reads a listing from it
	}
	var edits []edit
	ok := true
	if body[i] == '{' {
		ok = g.lockMessage(limits, body, 0, &edits)
	} else {
		a, _ := jsonwire.NewArray(body)
		for ok {
			elem, more := a.Next()
			if !more {
				ok = !a.Err()
				break
			}
			ok = g.lockMessage(limits, elem, a.Offset()-len(elem), &edits)
		}
	}
	if !ok {
		if own := jsonwire.LookupTop(body, "id"); isID(own) {
			id = own
		}
		if !isID(id) {
			id = json.RawMessage("null")
		}
		return errorFrame(id, codeUpstream, "mcpdrift proxy: the server's answer could not be read, so --lock could not be applied to it: it was not relayed")
	}
	if len(edits) == 0 {
		return text
	}
	return applyEdits(body, edits)
}

// lockMessage adds to edits what the lock changes in msg, a message at
// offset off of the text: each tools array of each result member loses
// the definitions the lock does not approve (hide), or the message becomes
// the session's failure (refuse-session). It reports false when msg cannot
// be walked.
func (g *gate) lockMessage(limits contract.Limits, msg []byte, off int, edits *[]edit) bool {
	o, isObject := jsonwire.NewObject(msg)
	if !isObject {
		return true // no client reads a message from it
	}
	mark := len(*edits)
	for {
		m, more := o.Next()
		if !more {
			return !o.Err()
		}
		if !keyFold(m, "result") {
			continue
		}
		res, isObject := jsonwire.NewObject(m.Value)
		if !isObject {
			continue
		}
		base := off + m.End - len(m.Value)
		for {
			t, more := res.Next()
			if !more {
				if res.Err() {
					return false
				}
				break
			}
			if !keyFold(t, "tools") {
				continue
			}
			kept, unapproved, ok := g.approvedOnly(limits, t.Value)
			switch {
			case !ok:
				return false
			case unapproved == nil:
				continue
			case g.lockMode == LockRefuseSession:
				g.fail(unapproved)
				id := jsonwire.Lookup(msg, "id")
				if !isID(id) {
					id = json.RawMessage("null")
				}
				*edits = append((*edits)[:mark], edit{off, off + len(msg), errorFrame(id, codeUpstream, unapproved.text())})
				return true
			}
			*edits = append(*edits, edit{base + t.End - len(t.Value), base + t.End, kept})
		}
	}
}

// approvedOnly returns the array arr with only the definitions the lock
// approves, and the first it left out (nil: none, arr stays). A value that
// is not an array is no listing a client reads (ok, nothing left out); a
// malformed one is not ok.
func (g *gate) approvedOnly(limits contract.Limits, arr []byte) (kept []byte, unapproved *refusal, ok bool) {
	a, isArray := jsonwire.NewArray(arr)
	if !isArray {
		return nil, nil, true
	}
	kept = append(make([]byte, 0, len(arr)), '[')
	n := 0
	for {
		elem, more := a.Next()
		if !more {
			break
		}
		l, err := limits.HashDefinitions(contract.KindTool, []json.RawMessage{elem})
		if err == nil && len(l) == 1 && g.approved(l[0].Key, l[0].Digest) {
			if n > 0 {
				kept = append(kept, ',')
			}
			kept = append(kept, elem...)
			n++
			continue
		}
		if unapproved == nil {
			unapproved = &refusal{code: semconv.RefusalToolNotApproved, rpcError: true}
			if err == nil && len(l) == 1 {
				unapproved.tool, unapproved.current = l[0].Key, l[0].Digest
			} else {
				unapproved.tool, _ = jsonwire.String(jsonwire.Lookup(elem, "name"))
			}
		}
	}
	if a.Err() {
		return nil, nil, false
	}
	return append(kept, ']'), unapproved, true
}

// unreadableText is what the agent reads in place of an answer the proxy
// could not read under a lock.
func unreadableText(why string) string {
	return "mcpdrift proxy: the server answered " + why + ", so --lock could not be applied to the answer: it was not relayed"
}

// overLimit says why an answer over the document limit is not relayed.
func overLimit(limits contract.Limits) string {
	return "with more than " + strconv.Itoa(limits.MaxDocumentBytes) + " bytes"
}

// fail marks the session failed (refuse-session) with its first refusal.
func (g *gate) fail(ref *refusal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.failed.Load() {
		g.failure = ref
		g.failed.Store(true)
	}
}

// keyFold reports whether m's name is name in any case (what a client
// decoding with encoding/json reads as name).
func keyFold(m jsonwire.Member, name string) bool {
	if jsonwire.KeyIs(m.Key, name) {
		return true
	}
	if len(m.Key) < len(name) {
		return false
	}
	s, ok := m.Name()
	return ok && strings.EqualFold(s, name)
}

// isID reports whether raw is a JSON-RPC id: a string or a number.
func isID(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '"' || raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// edit replaces text[start:end] with with.
type edit struct {
	start, end int
	with       []byte
}

// applyEdits applies edits, in order and not overlapping, to text.
func applyEdits(text []byte, edits []edit) []byte {
	out := make([]byte, 0, len(text))
	pos := 0
	for _, e := range edits {
		out = append(append(out, text[pos:e.start]...), e.with...)
		pos = e.end
	}
	return append(out, text[pos:]...)
}
