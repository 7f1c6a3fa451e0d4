//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/sdkdescribe"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestVolatileTimestampDrift (issue 25, item 3) runs the distribution with
// confirm_after 1 and volatile.ignore false against a go-sdk server whose
// search tool's description carries the time to the second, and adds a
// required parameter to search right after the first probe, before the
// timestamp is known to be volatile. The one drift must be that change;
// the timestamp alone is none; a mixed_contract the repeated timestamp
// opened for the single server must be resolved. With the receiver as it
// was before d0f5c01, the samples every probe takes kept the timestamp from
// being found volatile: no drift within this test's 90 s.
func TestVolatileTimestampDrift(t *testing.T) {
	t.Parallel()
	o := binaries(t)
	o.Agent, o.Server = "", ""
	o.Config = filepath.Join(testservers.RepoRoot(), "e2e", "testdata", "collector-volatile.yaml")
	srv := stampedServer()
	o.ServerPort = serveMCP(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := quickstart.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	defer dumpLogsOnFailure(t, o.Dir)

	eventually(t, o.Dir, "the first snapshot", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventSnapshot)) >= 1
	})
	srv.AddTool(searchTool("query", "filters"), textResult("no results")) // search now requires filters
	changed := time.Now()

	out := eventually(t, o.Dir, "a drift", 90*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventDrift)) >= 1
	})
	d := out.Events(semconv.EventDrift)[0]
	t.Logf("the change to its drift: %.1fs at a 1 s interval", d.Record.Timestamp().AsTime().Sub(changed).Seconds())
	if !hasChange(d, "input.property.added_required", "search") {
		t.Errorf("the drift does not report search's new required parameter: %s", d.Record.Attributes().AsRaw()[semconv.DriftChanges])
	}

	// Five more probes: the timestamp, changing on each, is no drift. Any
	// mixed state opened for the one server is resolved within 30 probes
	// (the old code held it for 128).
	out = probed(t, o.Dir, "stamped", 5)
	if n := len(out.Events(semconv.EventDrift)); n != 1 {
		for _, d := range out.Events(semconv.EventDrift) {
			t.Logf("drift: %s", d.Record.Body().AsString())
		}
		t.Errorf("%d drifts, want the one of the required parameter", n)
	}
	if len(out.Events(semconv.EventVolatileField)) == 0 {
		t.Error("no volatile_field event: the description's timestamp was never found volatile")
	}
	last, rises := int64(-1), 0
	eventually(t, o.Dir, "every mixed state resolved", 90*time.Second, func(out *quickstart.Outputs) bool {
		opened, resolved := 0, 0
		for _, e := range out.Events(semconv.EventMixedContract) {
			switch e.Attr(semconv.MixedState) {
			case "open":
				opened++
			case "resolved":
				resolved++
			}
		}
		if v, ok := out.GaugeValue("mcpdrift.probe.last_success", "stamped"); ok && v != last {
			last, rises = v, rises+1
		}
		if rises > 30 {
			t.Fatalf("%d mixed states opened for one server, %d resolved, 30 probes after the drift", opened, resolved)
		}
		if opened == resolved {
			t.Logf("mixed states opened and resolved: %d", opened)
		}
		return opened == resolved
	})
	t.Logf("start to end: %.1fs", time.Since(start).Seconds())
}

// hasChange reports whether the drift lists a change of rule to tool.
func hasChange(d quickstart.Event, rule, tool string) bool {
	v, ok := d.Record.Attributes().Get(semconv.DriftChanges)
	if !ok {
		return false
	}
	for _, c := range v.Slice().All() {
		m := c.Map()
		r, _ := m.Get(semconv.ChangeRule)
		n, _ := m.Get(semconv.ChangeName)
		if r.Str() == rule && n.Str() == tool {
			return true
		}
	}
	return false
}

// stampedServer is a go-sdk server with a search and a fetch tool; search's
// description ends with the time to the second of the tools/list it answers.
func stampedServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stamped", Version: "1.0.0"}, nil)
	srv.AddTool(searchTool("query"), textResult("no results"))
	srv.AddTool(&mcp.Tool{Name: "fetch", Description: "Fetch a page.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`)}, textResult("a page"))
	srv.AddReceivingMiddleware(sdkdescribe.Rewrite("search", func() string {
		return fmt.Sprintf("Search the index. Index as of %s.", time.Now().UTC().Format(time.DateTime))
	}))
	return srv
}

// searchTool is search, requiring the named string parameters.
func searchTool(required ...string) *mcp.Tool {
	props := make([]string, len(required))
	for i, p := range required {
		props[i] = fmt.Sprintf("%q:{\"type\":\"string\"}", p)
	}
	schema := fmt.Sprintf(`{"type":"object","properties":{%s},"required":["%s"]}`, strings.Join(props, ","), strings.Join(required, `","`))
	return &mcp.Tool{Name: "search", Description: "Search the index.", InputSchema: json.RawMessage(schema)}
}

// serveMCP serves srv's Streamable HTTP at /mcp on a loopback port, until
// the test ends, and returns the port.
func serveMCP(t testing.TB, srv *mcp.Server) int {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { _ = hs.Close() })
	return l.Addr().(*net.TCPAddr).Port
}
