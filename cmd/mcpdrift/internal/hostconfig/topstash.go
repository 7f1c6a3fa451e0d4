package hostconfig

import "fmt"

// topStash is the file's top-level x-mcpdrift member, where wrap keeps what
// unwrap needs (each server's digest and original entry, by name) for hosts
// that refuse a member they do not know inside a server entry but keep
// unknown top-level settings: Gemini CLI warns "Invalid configuration …
// Unrecognized key(s) in object: 'x-mcpdrift'" at every start for the
// first, and says nothing of the second.
type topStash struct {
	root   *Node
	member *Member // the member the file has, or nil
	lay    layout  // of its value
	added  []field
	gone   map[string]bool
}

func newTopStash(src []byte, root *Node, unit, nl string) (*topStash, error) {
	t := &topStash{root: root, gone: map[string]bool{}}
	pretty := len(root.Members) > 0 && containsNewline(src[root.Start:root.Members[0].KeyStart])
	t.lay = layout{pretty: pretty, indent: unit, unit: unit, nl: nl}
	for i, m := range root.Members {
		if m.Key != StashKey {
			continue
		}
		if t.member != nil {
			return nil, errAt(src, m.KeyStart, fmt.Sprintf("%q appears twice", StashKey))
		}
		if m.Value.Kind != '{' {
			return nil, errAt(src, m.Value.Start, fmt.Sprintf("%q is not an object", StashKey))
		}
		t.member = &root.Members[i]
		if ind, ok := lineIndent(src, m.KeyStart); ok && pretty {
			t.lay.indent = ind
		}
	}
	return t, nil
}

func containsNewline(b []byte) bool {
	for _, c := range b {
		if c == '\n' {
			return true
		}
	}
	return false
}

// of returns the stash of server name, or nil.
func (t *topStash) of(name string) *Node {
	if t == nil || t.member == nil || t.gone[name] {
		return nil
	}
	return t.member.Value.Get(name)
}

// taken reports whether this rewrite stashed a server named name already.
func (t *topStash) taken(name string) bool {
	if t == nil {
		return false
	}
	for _, f := range t.added {
		if f.key == name {
			return true
		}
	}
	return false
}

// add keeps what unwrap needs of server name; original is its entry's text.
func (t *topStash) add(name, sum, original string) {
	t.added = append(t.added, field{name, t.lay.deeper().object([]field{{"wrapped", sum}, {"original", original}})})
}

// restored drops the stash of a server unwrap restored.
func (t *topStash) restored(name string) {
	if t != nil {
		t.gone[name] = true
	}
}

// edit returns the change to the file's top-level member: written when
// servers were wrapped, rewritten without those unwrapped, and removed,
// exactly as it was added, when none is left.
func (t *topStash) edit(src []byte) (Edit, bool) {
	if len(t.added) == 0 && len(t.gone) == 0 {
		return Edit{}, false
	}
	var fields []field
	if t.member != nil {
		for _, m := range t.member.Value.Members {
			if !t.gone[m.Key] {
				fields = append(fields, field{m.Key, string(src[m.Value.Start:m.Value.End])})
			}
		}
	}
	fields = append(fields, t.added...)
	members := t.root.Members
	switch {
	case t.member == nil && len(fields) == 0:
		return Edit{}, false
	case t.member == nil:
		at := members[len(members)-1].Value.End
		sep := " "
		if t.lay.pretty {
			sep = t.lay.nl + t.lay.indent
		}
		return Edit{Start: at, End: at, Text: "," + sep + quote(StashKey) + ": " + t.lay.object(fields)}, true
	case len(fields) > 0:
		return Edit{Start: t.member.Value.Start, End: t.member.Value.End, Text: t.lay.object(fields)}, true
	}
	for i := range members {
		if &members[i] != t.member {
			continue
		}
		switch {
		case i > 0: // from the end of the member before: its comma and what followed
			return Edit{Start: members[i-1].Value.End, End: t.member.Value.End}, true
		case len(members) > 1:
			return Edit{Start: t.member.KeyStart, End: members[1].KeyStart}, true
		}
	}
	return Edit{Start: t.member.KeyStart, End: t.member.Value.End}, true
}
