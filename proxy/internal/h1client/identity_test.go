package h1client

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestGzipAskedByTheCallerOverTLS: a TLS upstream goes to http.Transport,
// which leaves compressed a gzip the caller asked for (stdio → HTTP does);
// the answer still comes back readable, as over the proxy's own
// connections.
func TestGzipAskedByTheCallerOverTLS(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			t.Errorf("Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = zw.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
		_ = zw.Close()
	}))
	defer ts.Close()
	base := ts.Client().Transport.(*http.Transport).Clone()
	tr := New(base)
	defer tr.Close()
	req, _ := http.NewRequest(http.MethodPost, ts.URL, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || string(body) != `{"jsonrpc":"2.0","id":1,"result":{}}` || res.Header.Get("Content-Encoding") != "" {
		t.Errorf("answer %q (%v), Content-Encoding %q: want it undone", body, err, res.Header.Get("Content-Encoding"))
	}
}
