package mcpimpactprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSetAtKeepsHistorySorted(t *testing.T) {
	var h []version
	h = setAt(h, 100, "a")
	h = setAt(h, 300, "c")
	h = setAt(h, 200, "b") // arrives late
	h = setAt(h, 250, "b") // no change
	h = setAt(h, 150, "a") // no change
	assert.Equal(t, []version{{100, "a"}, {200, "b"}, {300, "c"}}, h)
	h = setAt(h, 250, "c") // the change to c happened earlier than known
	assert.Equal(t, []version{{100, "a"}, {200, "b"}, {250, "c"}}, h)
	assert.Empty(t, setAt(nil, 5, ""), "a tool never offered has no history")
	for i := range 20 {
		h = setAt(h, int64(1000+i), string(rune('d'+i)))
	}
	assert.Len(t, h, maxVersionsPerTool)
	assert.Equal(t, "w", h[len(h)-1].digest)
}

func TestJudge(t *testing.T) {
	s := &server{listed: true, tools: map[string][]version{"t": {{100, "a"}, {200, "b"}, {300, ""}}}}
	for _, tc := range []struct {
		at      int64
		digest  string
		current string
		stale   bool
	}{
		{50, "a", "a", false},  // before anything known: the first version held
		{150, "a", "a", false}, // current then
		{150, "b", "a", false}, // ahead of the probe: adopted later
		{250, "a", "b", true},
		{250, "x", "b", true},
		{350, "b", "", true}, // removed
	} {
		v := s.judge("t", tc.at, tc.digest)
		assert.True(t, v.known)
		assert.Equal(t, tc.current, v.current, "at %d", tc.at)
		assert.Equal(t, tc.stale, v.stale, "at %d with %s", tc.at, tc.digest)
	}
	assert.Equal(t, verdict{known: true, stale: true}, s.judge("other", 150, "a"), "a listed server without the tool")
	assert.False(t, (&server{tools: map[string][]version{}}).judge("t", 1, "a").known)
}

func TestResolveAmbiguity(t *testing.T) {
	c := newContracts()
	c.apply(&listing{name: "a", url: "http://h:1/mcp", info: "same", digests: map[string]string{}})
	c.apply(&listing{name: "b", url: "http://h:1/other", info: "same", digests: map[string]string{}})
	assert.Nil(t, c.resolve(identity{name: "same"}), "two servers share the serverInfo name")
	assert.Nil(t, c.resolve(identity{host: "h", port: "1"}), "two servers on that host and port")
	assert.Equal(t, "a", c.resolve(identity{name: "a", url: "http://h:1/other"}).name, "the exact name wins")
	assert.Equal(t, "b", c.resolve(identity{url: "http://H:1/other/"}).name)
}

func TestInternerReusesIDs(t *testing.T) {
	in := newStrings()
	a := in.acquire("a")
	assert.Equal(t, a, in.acquire("a"))
	in.release(a)
	in.release(a)
	_, ok := in.lookup("a")
	assert.False(t, ok)
	b := in.acquire("b")
	assert.Equal(t, a, b, "freed ids are reused")
	assert.Equal(t, 2, in.span())
	assert.Equal(t, uint32(0), in.acquire(""))
}
