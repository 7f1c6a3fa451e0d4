package interceptor_test

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// FuzzFrames feeds arbitrary frames both ways: nothing panics, the
// interceptor never changes a frame it cannot read, and a valid frame stays
// valid JSON after injection.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"x"}}`,
		`[{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","_meta":{}}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`,
	} {
		f.Add([]byte(s))
	}
	tp := sdktrace.NewTracerProvider()
	ic := interceptor.New(interceptor.WithTracerProvider(tp), interceptor.WithPropagators(propagation.TraceContext{}),
		interceptor.WithArgumentValidation(true), interceptor.WithErrorHandler(func(error) {}))
	f.Fuzz(func(t *testing.T, frame []byte) {
		sess := ic.NewSession(interceptor.Endpoint{Pipe: true})
		in := append([]byte(nil), frame...)
		out := sess.SendFrame(context.Background(), frame)
		if string(frame) != string(in) {
			t.Fatal("SendFrame modified its input")
		}
		if json.Valid(frame) && !json.Valid(out) {
			t.Fatalf("valid frame became invalid:\n%s\n%s", frame, out)
		}
		sess.ReceiveFrame(frame)
		sess.ReceiveFrame(out)
		sess.Close()
	})
}
