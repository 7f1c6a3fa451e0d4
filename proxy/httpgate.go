package proxy

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// httpGate is the --lock gate of the HTTP → HTTP mode. It sits under the
// interceptor's tap, so what it answers itself is recorded like a server's
// answer. Each MCP session (Mcp-Session-Id; sessionless clients share one)
// has its own gate state, learned from the tools/list JSON responses the
// session gets: unapproved definitions are left out of them, and calls for
// them are answered with TOOL_NOT_APPROVED without reaching the server.
type httpGate struct {
	next     http.RoundTripper
	proto    *gate // the flags; each session gets a copy
	cfg      *Config
	refusals metric.Int64Counter

	mu       sync.Mutex
	sessions map[string]*gate
}

func newHTTPGate(next http.RoundTripper, g *gate, cfg *Config, tel Telemetry) *httpGate {
	refusals, _ := tel.Meter.Meter(ScopeName).Int64Counter(semconv.MetricProxyRefusals,
		metric.WithDescription("Calls the proxy answered itself instead of forwarding: stale or unapproved tool definitions."))
	return &httpGate{next: next, proto: g, cfg: cfg, refusals: refusals, sessions: map[string]*gate{}}
}

// session returns the gate state of the session sid, or forgets it (end).
func (h *httpGate) session(sid string, end bool) *gate {
	h.mu.Lock()
	defer h.mu.Unlock()
	if end {
		delete(h.sessions, sid)
		return nil
	}
	g := h.sessions[sid]
	if g == nil {
		g = &gate{refuse: h.proto.refuse, lock: h.proto.lock, lockMode: h.proto.lockMode}
		h.sessions[sid] = g
	}
	return g
}

func (h *httpGate) RoundTrip(req *http.Request) (*http.Response, error) {
	sid := req.Header.Get(headerSessionID)
	if req.Method == http.MethodDelete {
		h.session(sid, true)
		return h.next.RoundTrip(req)
	}
	if req.Method != http.MethodPost || req.Body == nil || req.Body == http.NoBody {
		return h.next.RoundTrip(req)
	}
	body, whole := readBounded(&req.Body, h.cfg.Limits.MaxDocumentBytes)
	if !whole {
		return h.next.RoundTrip(req) // too large to judge (or unreadable): forwarded as it is, ungated
	}
	m, ok := interceptor.ParseMessage(body) // a batch does not parse: forwarded ungated
	if !ok || !m.ID.Valid() || m.Method == "" {
		return h.next.RoundTrip(req)
	}
	g := h.session(sid, false)
	if g.sessionFailed() {
		return h.answer(req, m, g.failure), nil
	}
	if m.Method == mcpwire.MethodToolsCall {
		tool := toolName(m.Params)
		var planned string
		var listed bool
		if p := g.current.Load(); p != nil {
			planned, listed = (*p)[tool]
		}
		if ref := g.check(tool, planned, listed); ref != nil {
			return h.answer(req, m, ref), nil
		}
	}
	resp, err := h.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode == http.StatusNotFound && sid != "" {
		h.session(sid, true) // the server ended the session
	}
	if m.Method != mcpwire.MethodToolsList || resp.StatusCode != http.StatusOK {
		return resp, nil
	}
	return h.listing(resp, g), nil
}

// listing learns the session's definitions from a tools/list JSON response
// and applies the lock to it. Event-stream responses pass unfiltered.
func (h *httpGate) listing(resp *http.Response, g *gate) *http.Response {
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return resp
	}
	body, whole := readBounded(&resp.Body, h.cfg.Limits.MaxDocumentBytes)
	if !whole {
		return resp
	}
	m, ok := interceptor.ParseMessage(body)
	if ok && m.Result != nil {
		if defs, readable, _ := interceptor.ToolDefinitions(h.cfg.Limits, m.Result); readable {
			current := make(map[string]string, len(defs))
			for _, d := range defs {
				current[d.Key] = d.Digest
			}
			if next, _ := jsonwire.String(jsonwire.Lookup(m.Result, "nextCursor")); next == "" {
				g.learn(current)
			}
			body = g.filterListing(body, m, defs)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return resp
}

// answer is the proxy's own response to a refused request: HTTP 200, the
// tool execution error (or, for a failed session, the JSON-RPC error) the
// stdio modes answer with, counted like theirs.
func (h *httpGate) answer(req *http.Request, m interceptor.Message, ref *refusal) *http.Response {
	h.refusals.Add(req.Context(), 1, metric.WithAttributes(
		attribute.String(semconv.GuardRefusal, ref.code),
		attribute.String(semconv.ServerName, h.cfg.ServerName)))
	body := ref.result(m.RawID)
	if ref.rpcError || m.Method != mcpwire.MethodToolsCall {
		body = errorFrame(m.RawID, codeUpstream, ref.text())
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(body))}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// CloseIdleConnections forwards to the transport under the gate.
func (h *httpGate) CloseIdleConnections() {
	if ci, ok := h.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// readBounded reads *body whole if it holds at most limit bytes (whole);
// either way *body is replaced by a body that gives the same bytes again.
func readBounded(body *io.ReadCloser, limit int) (b []byte, whole bool) {
	rc := *body
	b, err := io.ReadAll(io.LimitReader(rc, int64(limit)+1))
	if err != nil || len(b) > limit {
		*body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), rc), rc}
		return b, false
	}
	rc.Close()
	*body = io.NopCloser(bytes.NewReader(b))
	return b, true
}
