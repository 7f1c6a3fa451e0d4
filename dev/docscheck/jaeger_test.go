package docscheck

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The answers docs/queries-jaeger.md shows are marked with the question
// their query asks:
//
//	<!-- output: jaeger stale-calls -->
//	<!-- output: jaeger old-digest create_ticket -->
//
// A docs run has no Jaeger: the answer is what the page's jq program makes
// of the spans the quickstart scene's collector exported, the spans that
// e2e/backends_test.go shows a real Jaeger answers these queries with, span
// for span. Printed as jq's @tsv prints, masked as a control-plane command's
// output.
const jaegerCommand = "jaeger"

// jaegerAnswer answers one of the page's questions.
func (s *scene) jaegerAnswer(t *testing.T, args []string) string {
	t.Helper()
	s.quickstart(t)
	out, err := quickstart.ReadOutputs(s.quickstartDir())
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case len(args) == 2 && args[1] == "stale-calls":
		return staleCalls(out.ToolCalls())
	case len(args) == 3 && args[1] == "old-digest":
		drifts := out.Events(semconv.EventDrift)
		if len(drifts) == 0 {
			t.Fatal("the quickstart recorded no drift")
		}
		previous, ok := drifts[0].Record.Attributes().Get(semconv.PreviousToolDigests)
		if !ok {
			t.Fatalf("the drift event has no %s", semconv.PreviousToolDigests)
		}
		old, ok := previous.Map().Get(args[2])
		if !ok {
			t.Fatalf("the drift event has no previous digest of %s", args[2])
		}
		return callersOf(out.ToolCalls(), args[2], old.Str())
	}
	t.Fatalf("%q: the questions are %q and %q", strings.Join(args, " "), "jaeger stale-calls", "jaeger old-digest TOOL")
	return ""
}

// staleCalls is the first query's answer: calls marked stale, by agent and
// tool (jq's group_by sorts the groups).
func staleCalls(calls []quickstart.Span) string {
	type key struct{ agent, tool string }
	n := map[key]int{}
	for _, sp := range calls {
		if sp.Attr(semconv.ToolStale) == "true" {
			n[key{sp.Attr(semconv.GenAIAgentName), sp.Attr(semconv.GenAIToolName)}]++
		}
	}
	keys := slices.SortedFunc(maps.Keys(n), func(a, b key) int {
		return cmp.Or(strings.Compare(a.agent, b.agent), strings.Compare(a.tool, b.tool))
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\t%s\t%d\n", k.agent, k.tool, n[k])
	}
	return b.String()
}

// callersOf is the second query's answer: by agent, its sessions, its calls
// of tool with digest and the last one's start (jq's todate: seconds, UTC).
func callersOf(calls []quickstart.Span, tool, digest string) string {
	type agg struct {
		sessions map[string]bool
		calls    int
		last     time.Time
	}
	by := map[string]*agg{}
	for _, sp := range calls {
		if sp.Attr(semconv.GenAIToolName) != tool || sp.Attr(semconv.ToolDigest) != digest {
			continue
		}
		a := by[sp.Attr(semconv.GenAIAgentName)]
		if a == nil {
			a = &agg{sessions: map[string]bool{}}
			by[sp.Attr(semconv.GenAIAgentName)] = a
		}
		a.sessions[sp.Attr(semconv.GenAIConversationID)] = true
		a.calls++
		if start := sp.Span.StartTimestamp().AsTime(); start.After(a.last) {
			a.last = start
		}
	}
	var b strings.Builder
	for _, agent := range slices.Sorted(maps.Keys(by)) {
		a := by[agent]
		fmt.Fprintf(&b, "%s\t%d\t%d\t%s\n", agent, len(a.sessions), a.calls, a.last.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return b.String()
}
