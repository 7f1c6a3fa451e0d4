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

// TestJudge: the digest-level judgement, every evidence case.
func TestJudge(t *testing.T) {
	twoChanges := []version{{100, "a"}, {200, "b"}, {300, "c"}}
	changedBack := []version{{100, "a"}, {200, "b"}, {300, "a"}}
	removed := []version{{100, "a"}, {200, "b"}, {300, ""}}
	for _, tc := range []struct {
		name        string
		history     []version
		provisional string
		observed    int64
		at          int64
		digest      string
		want        staleness
		current     string
	}{
		{"before anything known, the first version held", twoChanges, "", 300, 50, "a", judgedCurrent, "a"},
		{"in effect at the call", twoChanges, "", 300, 150, "a", judgedCurrent, "a"},
		{"adopted later: the host re-listed before the probe", twoChanges, "", 300, 150, "b", judgedCurrent, "b"},
		{"superseded before the call", twoChanges, "", 300, 250, "a", judgedStale, "b"},
		{"two changes in a row, planned on the first", twoChanges, "", 300, 350, "a", judgedStale, "c"},
		{"two changes in a row, planned on the second", twoChanges, "", 300, 350, "b", judgedStale, "c"},
		{"two changes in a row, the last", twoChanges, "", 300, 350, "c", judgedCurrent, "c"},
		{"changed back, planned on the first while the second was served", changedBack, "", 300, 250, "a", judgedUnknown, "b"},
		{"changed back, the second after the return", changedBack, "", 300, 350, "b", judgedStale, "a"},
		{"changed back, the first again", changedBack, "", 300, 350, "a", judgedCurrent, "a"},
		{"removed tool", removed, "", 300, 350, "b", judgedStale, ""},
		{"never seen, no probe since the call", twoChanges, "", 300, 350, "x", judgedAhead, "c"},
		{"never seen, a probe since the call", twoChanges, "", 400, 350, "x", judgedUnknown, "c"},
		{"never seen, an older snapshot since", twoChanges, "", 300, 250, "x", judgedUnknown, "b"},
		{"seen by a prompt probe, not confirmed", twoChanges, "x", 400, 350, "x", judgedCurrent, "c"},
		{"the confirmed one while a prompt probe saw another", twoChanges, "x", 400, 350, "c", judgedCurrent, "c"},
		{"a tool no listing had yet", nil, "", 300, 350, "x", judgedAhead, ""},
		{"a tool only a prompt probe saw", nil, "x", 400, 350, "x", judgedCurrent, ""},
		{"no digest", twoChanges, "", 300, 350, "", unjudged, "c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := digestEvidence{history: tc.history, provisional: tc.provisional, observed: tc.observed}
			got, current := judgeDigest(&ev, tc.at, tc.digest)
			assert.Equal(t, tc.want.String(), got.String())
			assert.Equal(t, tc.current, current)
		})
	}
}

// TestObserveProvisional: a prompt probe's digests count until a confirmed
// listing as recent replaces them, and an older probe's answer is ignored.
func TestObserveProvisional(t *testing.T) {
	c := newContracts()
	c.apply(&listing{name: "s", at: 100, digests: map[string]string{"t": "a"}})
	s := c.servers["s"]
	assert.Equal(t, judgedAhead, s.judge("t", 150, "b").state)
	s.observe(200, map[string]string{"t": "b", "u": "n"})
	assert.Equal(t, judgedCurrent, s.judge("t", 150, "b").state, "the probe saw b served")
	assert.Equal(t, judgedCurrent, s.judge("u", 150, "n").state, "a new tool the probe saw")
	assert.Equal(t, judgedUnknown, s.judge("t", 150, "z").state, "a probe since the call did not see z")
	s.observe(190, map[string]string{"t": "z"})
	assert.Equal(t, "b", s.provisional["t"], "an older probe's answer landed late")
	c.apply(&listing{name: "s", at: 250, digests: map[string]string{"t": "b"}})
	assert.Nil(t, s.provisional)
	assert.Equal(t, judgedStale, s.judge("t", 300, "a").state)
	assert.Equal(t, judgedCurrent, s.judge("t", 300, "b").state)
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
