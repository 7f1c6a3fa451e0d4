package mcpgo

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// optionalInterfaces are the optional interfaces mcp-go looks for on a
// transport (client.go, protocol.go, stdio.go).
var optionalInterfaces = []reflect.Type{
	reflect.TypeFor[transport.BidirectionalInterface](),
	reflect.TypeFor[transport.HTTPConnection](),
	reflect.TypeFor[interface{ RequiresLegacyProtocol() bool }](),
	reflect.TypeFor[interface{ SetConnectionLostHandler(func(error)) }](),
	reflect.TypeFor[interface{ Stderr() io.Reader }](),
}

// plain implements only transport.Interface.
type plain struct{}

func (plain) Start(context.Context) error { return nil }
func (plain) SendRequest(context.Context, transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return nil, io.EOF
}
func (plain) SendNotification(context.Context, mcp.JSONRPCNotification) error { return nil }
func (plain) SetNotificationHandler(func(mcp.JSONRPCNotification))            {}
func (plain) Close() error                                                    { return nil }
func (plain) GetSessionId() string                                            { return "" }

// everything implements every optional interface.
type everything struct{ plain }

func (everything) SetRequestHandler(transport.RequestHandler) {}
func (everything) SetProtocolVersion(string)                  {}
func (everything) RequiresLegacyProtocol() bool               { return true }
func (everything) SetConnectionLostHandler(func(error))       {}
func (everything) Stderr() io.Reader                          { return strings.NewReader("") }

func TestWrapExposesExactlyTheOptionalInterfaces(t *testing.T) {
	sse, err := transport.NewSSE("http://127.0.0.1:1/sse")
	if err != nil {
		t.Fatal(err)
	}
	streamable, err := transport.NewStreamableHTTP("http://127.0.0.1:1/mcp")
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	inners := map[string]transport.Interface{
		"plain":      plain{},
		"everything": everything{},
		"inprocess":  transport.NewInProcessTransport(mcpgoserver.NewMCPServer("x", "1")),
		"stdio":      transport.NewIO(pr, pw, io.NopCloser(strings.NewReader(""))),
		"command":    transport.NewCommand("true"),
		"streamable": streamable,
		"sse":        sse,
	}
	masks := map[int]bool{}
	for name, inner := range inners {
		wrapped := NewTransport(inner, interceptor.Endpoint{})
		mask := 0
		for i, it := range optionalInterfaces {
			in, out := reflect.TypeOf(inner).Implements(it), reflect.TypeOf(wrapped).Implements(it)
			if in != out {
				t.Errorf("%s: wrapped transport implements %s = %v, inner %v", name, it, out, in)
			}
			if in {
				mask |= 1 << i
			}
		}
		masks[mask] = true
		if u, ok := wrapped.(Unwrapper); !ok || u.Unwrap() != inner {
			t.Errorf("%s: Unwrap does not return the inner transport", name)
		}
	}
	if len(masks) < 5 {
		t.Errorf("only %d distinct combinations exercised", len(masks))
	}
}

// TestForwarding checks the optional methods reach the inner transport.
func TestForwarding(t *testing.T) {
	rec := &recorder{}
	w := NewTransport(rec, interceptor.Endpoint{})
	w.(transport.HTTPConnection).SetProtocolVersion("2025-11-25")
	if !w.(interface{ RequiresLegacyProtocol() bool }).RequiresLegacyProtocol() {
		t.Error("RequiresLegacyProtocol not forwarded")
	}
	w.(interface{ SetConnectionLostHandler(func(error)) }).SetConnectionLostHandler(func(error) {})
	w.(transport.BidirectionalInterface).SetRequestHandler(func(context.Context, transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		return nil, nil
	})
	if got := strings.Join(rec.calls, ","); got != "SetProtocolVersion 2025-11-25,RequiresLegacyProtocol,SetConnectionLostHandler,SetRequestHandler" {
		t.Errorf("forwarded calls: %s", got)
	}
	if _, ok := w.(interface{ Stderr() io.Reader }); ok {
		t.Error("Stderr exposed although the inner transport lacks it")
	}
}

type recorder struct {
	plain
	calls []string
}

func (r *recorder) SetRequestHandler(transport.RequestHandler) {
	r.calls = append(r.calls, "SetRequestHandler")
}
func (r *recorder) SetProtocolVersion(v string) {
	r.calls = append(r.calls, "SetProtocolVersion "+v)
}
func (r *recorder) RequiresLegacyProtocol() bool {
	r.calls = append(r.calls, "RequiresLegacyProtocol")
	return true
}
func (r *recorder) SetConnectionLostHandler(func(error)) {
	r.calls = append(r.calls, "SetConnectionLostHandler")
}
