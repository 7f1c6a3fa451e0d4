package quickstart

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// ControlPlaneImpact asks the collector's control plane for the impact of
// every tool the summary's impact records name: its stale number is the
// dashboard's red number.
func (s Summary) ControlPlaneImpact(ctx context.Context, apiURL string) ([]apiwire.Impact, error) {
	type query struct{ server, tool string }
	var queries []query
	for _, e := range s.Impacts {
		q := query{e.Attr(semconv.ServerName), e.Attr(semconv.GenAIToolName)}
		if !slices.Contains(queries, q) {
			queries = append(queries, q)
		}
	}
	// By server and tool, as the summary lists them, whatever order the
	// records came in.
	slices.SortFunc(queries, func(a, b query) int {
		return cmp.Or(strings.Compare(a.server, b.server), strings.Compare(a.tool, b.tool))
	})
	client := &http.Client{Timeout: 10 * time.Second}
	var out []apiwire.Impact
	for _, q := range queries {
		u := apiURL + "/api/v1/servers/" + url.PathEscape(q.server) + "/impact?tool=" + url.QueryEscape(q.tool)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		var im apiwire.Impact
		if err := json.Unmarshal(body, &im); err != nil {
			return nil, fmt.Errorf("GET %s: %w", u, err)
		}
		out = append(out, im)
	}
	return out, nil
}

// Report writes what `make demo` prints once the drift is in, and what
// README.md shows of it: the summary, then the control plane's answer for
// each changed tool (or why there was none).
func (s Summary) Report(ctx context.Context, w io.Writer, apiURL string) {
	s.Render(w)
	impacts, err := s.ControlPlaneImpact(ctx, apiURL)
	if err != nil {
		fmt.Fprintf(w, "\n(the control plane did not answer: %v)\n", err)
		return
	}
	s.RenderControlPlane(w, impacts)
}

// RenderControlPlane writes the control plane's stale numbers next to the
// count of spans marked stale: they are one count.
func (s Summary) RenderControlPlane(w io.Writer, impacts []apiwire.Impact) {
	fmt.Fprintf(w, "\n== CONTROL PLANE (GET /api/v1/servers/{name}/impact, the dashboard's red number)\n")
	var stale int64
	for _, im := range impacts {
		t := im.Totals
		stale += t.Stale
		fmt.Fprintf(w, "   %-15s %d stale calls, %d before the change", contract.SanitizeText(im.Tool), t.Stale, t.Before)
		if r := t.Recovery; r != nil {
			fmt.Fprintf(w, "; sessions: %d recovered, %d still stale, %d failed, %d idle", r.Recovered, r.StillStale, r.Failed, r.Idle)
		}
		fmt.Fprintln(w)
	}
	spans := 0
	for _, n := range s.StaleByAgent {
		spans += n
	}
	fmt.Fprintf(w, "   %d stale calls in all; %d spans marked mcpdrift.tool.stale=true\n", stale, spans)
}
