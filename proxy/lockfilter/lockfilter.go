// Package lockfilter applies --lock to what the agent reads: every tool
// listing in a JSON text on its way to the agent keeps only the
// definitions the lock approves (hide), or fails the session
// (refuse-session).
package lockfilter

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
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

// Filter applies the lock of g to one JSON text on its way to the agent (a
// stdio frame, an HTTP body, an event's data) and returns the text the
// agent gets: text itself when the lock leaves it as it is. id is the
// request a replacement error answers when the text names none it can read.
func Filter(g *gate.Gate, limits contract.Limits, text []byte, id json.RawMessage) []byte {
	if !g.Locked() {
		return text
	}
	body := bytes.TrimPrefix(text, jsonrpc.BOM) // clients that decode bytes skip it
	i := jsonwire.SkipSpace(body, 0)
	if i == len(body) || (body[i] != '{' && body[i] != '[') {
		return text // not JSON: no client reads a listing from it
	}
	var edits []edit
	ok := true
	if body[i] == '{' {
		ok = lockMessage(g, limits, body, 0, &edits)
	} else {
		a, _ := jsonwire.NewArray(body)
		for ok {
			elem, more := a.Next()
			if !more {
				ok = !a.Err()
				break
			}
			ok = lockMessage(g, limits, elem, a.Offset()-len(elem), &edits)
		}
	}
	if !ok {
		if own := jsonwire.LookupTop(body, "id"); jsonrpc.IsID(own) {
			id = own
		}
		if !jsonrpc.IsID(id) {
			id = json.RawMessage("null")
		}
		return jsonrpc.Error(id, jsonrpc.CodeUpstream, "mcpdrift proxy: the server's answer could not be read, so --lock could not be applied to it: it was not relayed")
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
func lockMessage(g *gate.Gate, limits contract.Limits, msg []byte, off int, edits *[]edit) bool {
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
		if !jsonrpc.KeyFold(m, "result") {
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
			if !jsonrpc.KeyFold(t, "tools") {
				continue
			}
			kept, unapproved, ok := approvedOnly(g, limits, t.Value)
			switch {
			case !ok:
				return false
			case unapproved == nil:
				continue
			case g.LockMode() == gate.LockRefuseSession:
				g.Fail(unapproved)
				id := jsonwire.Lookup(msg, "id")
				if !jsonrpc.IsID(id) {
					id = json.RawMessage("null")
				}
				*edits = append((*edits)[:mark], edit{off, off + len(msg), jsonrpc.Error(id, jsonrpc.CodeUpstream, unapproved.Text())})
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
func approvedOnly(g *gate.Gate, limits contract.Limits, arr []byte) (kept []byte, unapproved *gate.Refusal, ok bool) {
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
		if err == nil && len(l) == 1 && g.Approved(l[0].Key, l[0].Digest) {
			if n > 0 {
				kept = append(kept, ',')
			}
			kept = append(kept, elem...)
			n++
			continue
		}
		if unapproved == nil {
			if err == nil && len(l) == 1 {
				unapproved = gate.Unapproved(l[0].Key, l[0].Digest)
			} else {
				tool, _ := jsonwire.String(jsonwire.Lookup(elem, "name"))
				unapproved = gate.Unapproved(tool, "")
			}
		}
	}
	if a.Err() {
		return nil, nil, false
	}
	return append(kept, ']'), unapproved, true
}

// UnreadableText is what the agent reads in place of an answer the proxy
// could not read under a lock.
func UnreadableText(why string) string {
	return "mcpdrift proxy: the server answered " + why + ", so --lock could not be applied to the answer: it was not relayed"
}

// OverLimit says why an answer over the document limit is not relayed.
func OverLimit(limits contract.Limits) string {
	return "with more than " + strconv.Itoa(limits.MaxDocumentBytes) + " bytes"
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
