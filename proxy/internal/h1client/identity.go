package h1client

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
)

// identity undoes a gzip Content-Encoding (x-gzip is its old name), on
// every path: one the upstream used although the proxy asked for none (see
// forwarder.outgoing), or one stdio → HTTP asked for, which http.Transport
// (TLS and proxied upstreams) leaves compressed since it did not ask
// itself: the tap and the gate must read the answer. Other encodings, and gzip applied
// more than once, are left as they are (under --lock such an answer is not
// relayed: httpGate.pass).
func identity(res *http.Response) {
	ce := res.Header["Content-Encoding"]
	if len(ce) != 1 || res.Body == http.NoBody {
		return
	}
	if enc := strings.TrimSpace(ce[0]); !strings.EqualFold(enc, "gzip") && !strings.EqualFold(enc, "x-gzip") {
		return
	}
	res.Body = &gunzipBody{body: res.Body}
	res.Header.Del("Content-Encoding")
	res.Header.Del("Content-Length")
	res.ContentLength = -1
	res.Uncompressed = true
}

// gunzipBody decompresses a body as it is read; its gzip header is read at
// the first Read, not before (on an event stream it may be a while coming).
type gunzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

func (g *gunzipBody) Read(p []byte) (int, error) {
	if g.zr == nil {
		if g.err != nil {
			return 0, g.err
		}
		if g.zr, g.err = gzip.NewReader(g.body); g.err != nil {
			return 0, g.err
		}
	}
	return g.zr.Read(p)
}

func (g *gunzipBody) Close() error { return g.body.Close() }
