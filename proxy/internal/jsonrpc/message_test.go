package jsonrpc

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// TestParseEnvelope: Parse reads the envelope as interceptor.ParseMessage
// does, so the session records what it would have read itself.
func TestParseEnvelope(t *testing.T) {
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":1.5,"error":{"code":-1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`  {"jsonrpc":"2.0","id":7,"method":"a","method":"b","params":{},"params":[1]}  `,
		`{"jsonrpc":"2.0","id":1,"method":3}`,
		`{"id":1,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call",}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`not json`,
		``,
	} {
		want, ok := interceptor.ParseMessage([]byte(frame))
		got := Parse([]byte(frame))
		if got.OK != ok || !reflect.DeepEqual(got.Message, want) {
			t.Errorf("Parse(%s) = %v %+v, ParseMessage = %v %+v", frame, got.OK, got.Message, ok, want)
		}
		if got.Batch != (len(frame) > 0 && frame[0] == '[') {
			t.Errorf("Parse(%s).Batch = %v", frame, got.Batch)
		}
	}
}

// TestParseUnclear: which calls a gate cannot judge, read in the one pass.
func TestParseUnclear(t *testing.T) {
	for _, tc := range []struct {
		frame   string
		unclear bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, false},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"name":1}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/list","params":{}}`, false}, // not a call
		{`{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/call","params":{"name":"echo"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"name":"echo"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"PARAMS":{"name":"rm"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"rm"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"rm"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"echo","name":"rm"}}`, true}, // an escaped method
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, true},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`, true},                   // no id
		{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo"}}`, true},         // a null id
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},`, true},            // cut
		{`{"id":1,"method":"tools/call","params":{"name":"echo"}}`, false},                           // no jsonrpc member: clear, just not OK
		{`{"jsonrpc":"2.0","id":1,"meth\u006fd":"tools/call","params":{"n\u0061me":"echo"}}`, false}, // escaped names are the names
	} {
		if got := Parse([]byte(tc.frame)).Unclear; got != tc.unclear {
			t.Errorf("Parse(%s).Unclear = %v, want %v", tc.frame, got, tc.unclear)
		}
	}
}

// TestParseParams: what a request's params name, the first of each.
func TestParseParams(t *testing.T) {
	m := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"_meta":{"k":2},"cursor":"c","uri":"u","arguments":{"b":2}}}`))
	if m.Name() != "echo" || string(m.Arguments) != `{"a":1}` || string(m.Meta) != `{"k":2}` || m.Cursor() != "c" || m.URI() != "u" {
		t.Errorf("read %q %s %s %q %q", m.Name(), m.Arguments, m.Meta, m.Cursor(), m.URI())
	}
}

// TestWithParamsAndIn: the params the session returns replace the frame's
// (or are added), and a message moved into a copy reads the same.
func TestWithParamsAndIn(t *testing.T) {
	m := Parse([]byte(` {"jsonrpc":"2.0","id":1,"method":"a","params":{"x":1}} `))
	if got := m.WithParams(m.Params); !SameBytes(got, m.Frame) {
		t.Errorf("unchanged params gave a new frame %s", got)
	}
	if got := string(m.WithParams([]byte(`{"y":2}`))); got != ` {"jsonrpc":"2.0","id":1,"method":"a","params":{"y":2}} ` {
		t.Errorf("replaced: %s", got)
	}
	n := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"a"}`))
	if got := string(n.WithParams([]byte(`{"y":2}`))); got != `{"jsonrpc":"2.0","id":1,"method":"a","params":{"y":2}}` {
		t.Errorf("added: %s", got)
	}
	c := bytes.Clone(m.Frame)
	moved := m.In(c)
	want := Parse(c)
	if !reflect.DeepEqual(moved, want) || &moved.Params[0] != &c[bytes.Index(c, []byte(`{"x"`))] {
		t.Errorf("In: %+v, reading the copy: %+v", moved, want)
	}
}
