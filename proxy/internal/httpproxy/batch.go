package httpproxy

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
)

// JSON-RPC batches (2025-03-26 clients) through the HTTP → HTTP gate: each
// call is judged like a lone one, so a batch is no way around the gate.
// The refused ones never reach the server; the rest go as a smaller batch,
// and the gate's answers are merged into the server's answer to it — a JSON
// array gets them appended, an event stream gets them as events before the
// server's (clients match answers by id, in any order). A batch whose every
// request is refused, or whose rest the server only accepts (202: all
// notifications), is answered by the gate alone.

// batch gates the batch body of req for session g.
func (h *httpGate) batch(req *http.Request, g *httpSession, body []byte) (*http.Response, error) {
	g.remember(req, nil) // a batch (2025-03-26) carries no protocol _meta to keep
	a, _ := jsonwire.NewArray(body)
	var kept, answers [][]byte
	refused := map[interceptor.ID]*gate.Refusal{}
	for {
		elem, ok := a.Next()
		if !ok {
			break
		}
		m := jsonrpc.Parse(elem)
		if ref := g.Unclear(m.Unclear); ref != nil {
			refused[m.ID] = ref
			answers = append(answers, h.refusalFrame(req, &m, ref))
			continue
		}
		if m.Request() {
			if ref := h.judge(req, g, &m); ref != nil {
				refused[m.ID] = ref
				answers = append(answers, h.refusalFrame(req, &m, ref))
				continue
			}
		}
		kept = append(kept, elem)
	}
	if a.Err() || len(refused) == 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
		return h.forward(req, g, asked{}) // malformed (the server answers it), or nothing refused: as it came
	}
	if len(kept) == 0 {
		return h.answer(req, refused, answers, true), nil
	}
	rest := jsonrpc.Array(kept)
	out := req.Clone(req.Context())
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(rest)), int64(len(rest))
	out.Header.Set("Content-Length", strconv.Itoa(len(rest)))
	resp, err := h.forward(out, g, asked{})
	if err != nil {
		return nil, err
	}
	return h.merge(req, resp, refused, answers), nil
}

// merge puts the gate's answers into the server's answer to the rest of a
// batch. An error status passes as it is (the refused requests' spans
// still end as refusals).
func (h *httpGate) merge(req *http.Request, resp *http.Response, refused map[interceptor.ID]*gate.Refusal, answers [][]byte) *http.Response {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted:
		resp.Body.Close()
		return h.answer(req, refused, answers, true)
	case resp.StatusCode != http.StatusOK:
	case mt == "text/event-stream":
		var events []byte
		for _, a := range answers {
			events = append(append(append(events, "data: "...), a...), "\n\n"...)
		}
		resp.Body = &answeredBody{Reader: io.MultiReader(bytes.NewReader(events), resp.Body), Closer: resp.Body, refused: refused}
		unsized(resp)
		return resp
	case mt == "application/json":
		b, whole := readBounded(&resp.Body, h.cfg.Limits.MaxDocumentBytes)
		if !whole {
			break
		}
		var elems [][]byte
		if jsonrpc.IsBatch(b) {
			arr, _ := jsonwire.NewArray(b)
			for e, ok := arr.Next(); ok; e, ok = arr.Next() {
				elems = append(elems, e)
			}
		} else if len(bytes.TrimSpace(b)) > 0 {
			elems = append(elems, bytes.TrimSpace(b))
		}
		merged := jsonrpc.Array(append(elems, answers...))
		resp.Body = &answeredBody{Reader: bytes.NewReader(merged), Closer: io.NopCloser(nil), refused: refused}
		resp.ContentLength = int64(len(merged))
		resp.Header.Set("Content-Length", strconv.Itoa(len(merged)))
		return resp
	}
	resp.Body = &answeredBody{Reader: resp.Body, Closer: resp.Body, refused: refused}
	return resp
}
