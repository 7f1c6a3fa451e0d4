package docscheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

// A JSON block the docs show is marked with what produced it, an API
// request asked of the quickstart scene's control plane or a command run
// in its scene (as an output block's):
//
//	<!-- json: GET /api/v1/servers/demo-tools/impact?tool=create_ticket&hours=1 (subset) -->
//	<!-- json: mcpdrift diff --format json OLD NEW (subset) -->
//
// The block must be the real answer, or with "(subset)" an abridged one:
// each member it shows is in the answer, each array element it shows matches
// one of the answer's. A string "…" stands for any value. Values that vary
// from run to run in the control plane's answers are compared masked:
// numbers, times, days and hex (digests, drift ids). A JSON body the client sends is marked
// <!-- request: POST ROUTE --> and must decode into that route's request type.
const (
	jsonPrefix    = "json: "
	requestPrefix = "request: "
	elided        = "…"
)

// jsonSource is a json block's request or command and whether it is abridged.
func jsonSource(marker string) (args []string, subset, ok bool) {
	src, ok := strings.CutPrefix(marker, jsonPrefix)
	if !ok {
		return nil, false, false
	}
	src, subset = strings.CutSuffix(src, " (subset)")
	return strings.Fields(src), subset, true
}

// requestTypes are the request bodies the docs show, by route.
var requestTypes = map[string]func() any{
	"POST /api/v1/servers/{name}/accept": func() any { return new(apiwire.AcceptRequest) },
}

// answer asks the control plane (GET PATH) or runs a command, in its scene.
func (s *scene) answer(t *testing.T, args []string) []byte {
	t.Helper()
	if len(args) != 2 || args[0] != http.MethodGet {
		return []byte(s.produce(t, args))
	}
	s.quickstart(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.stack.APIURL()+args[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(body, []byte(s.stack.ServerURL()), []byte(stackServerURL))
}

// node is a JSON value that keeps its members' order (for -update).
type node struct {
	kind byte     // '{', '[', 's' string, 'n' number, 'b' bool, 'z' null
	keys []string // object members' names
	vals []*node  // object members' or array elements' values
	text string   // a string's value, a number's or bool's literal
}

func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(v)}
		for dec.More() {
			if n.kind == '{' {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key.(string))
			}
			val, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, val)
		}
		_, err := dec.Token() // the closing delimiter
		return n, err
	case string:
		return &node{kind: 's', text: v}, nil
	case json.Number:
		return &node{kind: 'n', text: v.String()}, nil
	case bool:
		return &node{kind: 'b', text: fmt.Sprint(v)}, nil
	default:
		return &node{kind: 'z', text: "null"}, nil
	}
}

func (n *node) member(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// What varies inside a string: times, days, hex runs (digests, ids, a
// digest abridged with "…").
var (
	maskJSONTime = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?Z?`)
	maskJSONDay  = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	maskJSONHex  = regexp.MustCompile(`\b[0-9a-f]{8,}(…|\b)`)
)

// comparer says how a shown value is compared with the real one.
type comparer struct {
	subset bool // the shown value is abridged
	vary   bool // the answer varies from run to run (the control plane's): mask it
}

// masked is a scalar as it is compared.
func (c comparer) masked(n *node) string {
	if !c.vary {
		return n.text
	}
	switch n.kind {
	case 'n':
		return "<n>"
	case 's':
		s := maskJSONTime.ReplaceAllString(n.text, "<time>")
		s = maskJSONDay.ReplaceAllString(s, "<day>")
		return "s" + maskJSONHex.ReplaceAllString(s, "<hex>")
	}
	return n.text
}

// matches says whether shown is real, or the part of it shown.
func (c comparer) matches(shown, real *node) bool {
	if shown.kind == 's' && shown.text == elided {
		return true
	}
	if shown.kind != real.kind {
		return false
	}
	switch shown.kind {
	case '{':
		if !c.subset && len(shown.keys) != len(real.keys) {
			return false
		}
		for i, k := range shown.keys {
			r := real.member(k)
			if r == nil || !c.matches(shown.vals[i], r) {
				return false
			}
		}
		return true
	case '[':
		if !c.subset && len(shown.vals) != len(real.vals) {
			return false
		}
		used := make([]bool, len(real.vals))
		for i, v := range shown.vals {
			j := c.matchAt(v, real, used)
			if j < 0 || !c.subset && j != i {
				return false
			}
			used[j] = true
		}
		return true
	}
	return shown.kind == real.kind && c.masked(shown) == c.masked(real)
}

// matchAt is the first real element not yet used that v matches, or -1.
func (c comparer) matchAt(v, real *node, used []bool) int {
	for j, r := range real.vals {
		if !used[j] && c.matches(v, r) {
			return j
		}
	}
	return -1
}

// project is the real answer cut to what shown shows (for -update): its
// members, its elements (each the one it matched, else the one at its place),
// its elisions.
func (c comparer) project(shown, real *node) *node {
	if !c.subset {
		return real
	}
	if shown.kind == 's' && shown.text == elided {
		return shown
	}
	if shown.kind != real.kind {
		return real
	}
	switch shown.kind {
	case '{':
		out := &node{kind: '{'}
		for i, k := range shown.keys {
			if r := real.member(k); r != nil {
				out.keys = append(out.keys, k)
				out.vals = append(out.vals, c.project(shown.vals[i], r))
			}
		}
		return out
	case '[':
		out := &node{kind: '['}
		used := make([]bool, len(real.vals))
		for i, v := range shown.vals {
			j := c.matchAt(v, real, used)
			if j < 0 && i < len(real.vals) && !used[i] {
				j = i
			}
			if j >= 0 {
				used[j] = true
				out.vals = append(out.vals, c.project(v, real.vals[j]))
			}
		}
		return out
	}
	return real
}

// jsonWidth is how wide a line of a formatted block may grow.
const jsonWidth = 100

// format writes n as the docs show JSON: compact, with ": " and ", ";
// what does not fit in jsonWidth fills lines with its members, each line
// starting under the first member, a member that spans lines on lines of
// its own.
func (n *node) format(col int) string {
	flat := n.flat()
	if col+len(flat) <= jsonWidth || n.kind != '{' && n.kind != '[' || len(n.vals) == 0 {
		return flat
	}
	var b strings.Builder
	b.WriteByte(n.kind)
	indent := col + 1
	at, spanned := indent, false
	for i, v := range n.vals {
		prefix, sep := "", ","
		if n.kind == '{' {
			prefix = quote(n.keys[i]) + ": "
		}
		if i == len(n.vals)-1 {
			sep = map[byte]string{'{': "}", '[': "]"}[n.kind]
		}
		item := prefix + v.flat() + sep
		if i > 0 {
			if !spanned && at+1+len(item) <= jsonWidth {
				b.WriteByte(' ')
				at++
			} else {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				at = indent
			}
		}
		if at+len(item) > jsonWidth {
			item = prefix + v.format(at+len(prefix)) + sep
		}
		b.WriteString(item)
		last := strings.LastIndexByte(item, '\n')
		spanned = last >= 0
		if spanned {
			at = len(item) - last - 1
		} else {
			at += len(item)
		}
	}
	return b.String()
}

// flat is n on one line.
func (n *node) flat() string {
	switch n.kind {
	case '{', '[':
		parts := make([]string, len(n.vals))
		for i, v := range n.vals {
			parts[i] = v.flat()
			if n.kind == '{' {
				parts[i] = quote(n.keys[i]) + ": " + parts[i]
			}
		}
		return string(n.kind) + strings.Join(parts, ", ") + map[byte]string{'{': "}", '[': "]"}[n.kind]
	case 's':
		return quote(n.text)
	}
	return n.text
}

// quote writes a string as JSON, "…" and "<" as they are.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// checkJSONBlock compares a json block with the real answer; with -update it
// returns the block's new body ("" when it holds).
func checkJSONBlock(t *testing.T, s *scene, b block, args []string, subset bool) string {
	t.Helper()
	shown, err := parseJSON([]byte(b.body))
	if err != nil {
		t.Fatalf("%s is not JSON: %v", b.where(), err)
	}
	answer := s.answer(t, args)
	real, err := parseJSON(answer)
	if err != nil {
		t.Fatalf("%s: the answer is not JSON: %v\n%s", strings.Join(args, " "), err, answer)
	}
	c := comparer{subset: subset, vary: args[0] == http.MethodGet}
	if c.matches(shown, real) {
		return ""
	}
	if !*update {
		t.Errorf("%s shows an answer to %q that the real one does not hold (go test ./dev/docscheck -run TestCommandOutputs -update rewrites it):\nshown:\n%s\nreal:\n%s",
			b.where(), strings.Join(args, " "), b.body, answer)
		return ""
	}
	return c.project(shown, real).format(0) + "\n"
}

// TestJSONBlocksMarked: every JSON block says what produced it (a json,
// output or example marker), or which request it is the body of (and then
// decodes into that request's type). A shape that is not JSON is no json
// block.
func TestJSONBlocksMarked(t *testing.T) {
	for _, b := range allBlocks(t) {
		if b.lang != "json" {
			continue
		}
		if strings.HasPrefix(b.marker, outputPrefix) || strings.HasPrefix(b.marker, "example: ") {
			continue // compared with a run, or with the validated file
		}
		if _, _, ok := jsonSource(b.marker); ok {
			if _, err := parseJSON([]byte(b.body)); err != nil {
				t.Errorf("%s is not JSON: %v", b.where(), err)
			}
			continue
		}
		route, ok := strings.CutPrefix(b.marker, requestPrefix)
		if !ok {
			t.Errorf("%s shows JSON without saying what produced it: mark it <!-- json: GET PATH --> or <!-- json: COMMAND -->, (subset) when abridged, or <!-- request: METHOD ROUTE -->", b.where())
			continue
		}
		newBody, ok := requestTypes[route]
		if !ok {
			t.Errorf("%s: no request type known for %q", b.where(), route)
			continue
		}
		dec := json.NewDecoder(strings.NewReader(b.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(newBody()); err != nil {
			t.Errorf("%s is no body %s takes: %v", b.where(), route, err)
		}
	}
}

// TestJSONComparison: an abridged answer holds, a changed value does not, a
// varying one holds only masked, and -update's rewrite holds and parses.
func TestJSONComparison(t *testing.T) {
	real := mustParse(t, `{"name": "demo-tools", "status": "DRIFTED", "at": "2026-12-05T15:16:56.1Z", "digest": "41dcc3fd428dc8b94f2583c13c504516c5de8f8e3d0cba912708b59f110576e0",
		"agents": [{"agent": "researcher", "calls": 75}, {"agent": "planner", "calls": 70}], "mixed": false}`)
	for _, tc := range []struct {
		shown string
		c     comparer
		holds bool
	}{
		{`{"name": "demo-tools", "agents": [{"agent": "planner"}]}`, comparer{subset: true}, true},
		{`{"name": "demo-tools", "agents": [{"agent": "planner"}]}`, comparer{}, false},
		{`{"name": "demo-tools", "status": "UP"}`, comparer{subset: true, vary: true}, false},
		{`{"mixed": true}`, comparer{subset: true, vary: true}, false},
		{`{"agents": [{"agent": "nobody"}]}`, comparer{subset: true, vary: true}, false},
		{`{"digest": "…", "at": "2026-12-02T10:15:42.318Z", "agents": [{"calls": 3}]}`, comparer{subset: true, vary: true}, true},
		{`{"digest": "41dcc3fd…", "agents": [{"calls": 3}]}`, comparer{subset: true}, false},
	} {
		if got := tc.c.matches(mustParse(t, tc.shown), real); got != tc.holds {
			t.Errorf("%+v: %s against the real answer: %v, want %v", tc.c, tc.shown, got, tc.holds)
		}
	}
	c := comparer{subset: true, vary: true}
	shown := mustParse(t, `{"status": "UP", "agents": [{"agent": "planner", "calls": 1}], "gone": 1}`)
	rewritten := c.project(shown, real).format(0)
	if want := `{"status": "DRIFTED", "agents": [{"agent": "planner", "calls": 70}]}`; rewritten != want {
		t.Errorf("rewritten as\n%s\nwant\n%s", rewritten, want)
	}
	long := c.project(mustParse(t, `{"name": "…", "status": "…", "at": "…", "digest": "", "agents": [{"agent": "", "calls": 0}, {"agent": "", "calls": 0}], "mixed": true}`), real).format(0)
	if !strings.Contains(long, "\n") || !c.matches(mustParse(t, long), real) {
		t.Errorf("a rewrite wider than %d columns:\n%s", jsonWidth, long)
	}
	for _, line := range strings.Split(long, "\n") {
		if len(line) > jsonWidth && !strings.Contains(line, "41dcc3fd") {
			t.Errorf("line over %d columns: %s", jsonWidth, line)
		}
	}
}

func mustParse(t *testing.T, s string) *node {
	t.Helper()
	n, err := parseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
