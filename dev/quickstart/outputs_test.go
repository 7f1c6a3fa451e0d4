package quickstart

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// An absent attribute reads as "", on the span and on its resource; the
// zero pcommon.Value panics if asked for its string.
func TestSpanAttrAbsent(t *testing.T) {
	s := Span{Resource: pcommon.NewMap(), Span: ptrace.NewSpan()}
	if got := s.Attr("missing"); got != "" {
		t.Errorf("Attr(missing) = %q, want empty", got)
	}
	if got := s.ServerName(); got != "" {
		t.Errorf("ServerName() with none = %q, want empty", got)
	}
	s.Resource.PutStr(semconv.ServerName, "tickets")
	if got := s.ServerName(); got != "tickets" {
		t.Errorf("ServerName() from resource = %q, want tickets", got)
	}
	s.Span.Attributes().PutStr(semconv.ServerName, "span-level")
	if got := s.ServerName(); got != "span-level" {
		t.Errorf("ServerName() = %q, want the span's own", got)
	}
}
