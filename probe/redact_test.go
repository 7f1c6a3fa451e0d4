package probe

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

func TestRedactorLearnsCredentialShapes(t *testing.T) {
	r := newRedactor(&Target{})
	r.sentHeader("authorization", []string{"Basic " + base64.StdEncoding.EncodeToString([]byte("alice-admin:pw-0123456789"))})
	r.sentHeader("Cookie", []string{"theme=dark; sid=sess-99887766; csrf=\"csrf-11223344\""})
	r.sentHeader("X-Api-Key", []string{"  key-5544332211  "})
	r.sentHeader("Content-Type", []string{"application/json"}) // the probe's own: not a secret
	r.sentHeader("Mcp-Method", []string{"resources/templates/list"})
	r.sentHeader(":authority", []string{"mcp.example.com:443"}) // HTTP/2 pseudo headers
	r.sentHeader(":path", []string{"/v1/mcp/endpoint"})
	r.receivedCookies(http.Header{"Set-Cookie": {"session=srv-24681357; Path=/; HttpOnly"}})
	for _, s := range []string{"alice-admin", "pw-0123456789", "sess-99887766", "csrf-11223344", "key-5544332211", "srv-24681357"} {
		if got := r.text("echo " + s + " end"); got != "echo "+redacted+" end" {
			t.Errorf("%s: got %q", s, got)
		}
	}
	for _, s := range []string{"application/json", "resources/templates/list", "mcp.example.com:443", "/v1/mcp/endpoint"} {
		if got := r.text(s); got != s {
			t.Errorf("%q is no secret, got %q", s, got)
		}
	}
}

// In JSON a secret may be escaped ("/" as "\/", a quote as \"); redaction
// keeps the document valid JSON, and a document without a secret is not
// touched at all.
func TestRedactorJSON(t *testing.T) {
	r := newRedactor(&Target{Secrets: []string{`tok/0123456789`, `quo"te-secret`}})
	for _, doc := range []string{
		`{"tools":[{"name":"a","description":"token tok\/0123456789 here"}]}`,
		`{"tools":[{"name":"a","description":"token tok/0123456789 here"}]}`,
		`{"tools":[{"name":"a","description":"say quo\"te-secret","n":1.50}]}`,
		`{"tools":[{"name":"tok/0123456789","inputSchema":{"type":"object"}}]}`,
	} {
		clean, changed := r.json([]byte(doc))
		if !changed || strings.Contains(string(clean), "0123456789") || strings.Contains(string(clean), "te-secret") || !strings.Contains(string(clean), redacted) {
			t.Errorf("%s -> %s (changed %v)", doc, clean, changed)
		}
		if _, err := topMembers(clean); err != nil {
			t.Errorf("%s is no longer a JSON object: %v", clean, err)
		}
	}
	plain := `{"tools": [ {"name":"a", "n": 1.50} ]}`
	if clean, changed := r.json([]byte(plain)); changed || string(clean) != plain {
		t.Errorf("a document without a secret was re-encoded: %s", clean)
	}
	if got, _ := r.json([]byte(`{"n":1.50,"d":"tok/0123456789"}`)); !strings.Contains(string(got), `1.50`) {
		t.Errorf("numbers must keep their spelling: %s", got)
	}
}

// BenchmarkProbeSecrets measures what redaction costs a probe: the same
// probes with an HTTP client that adds a bearer token and a cookie (every
// header value written is recorded; every server text is redacted) and
// without, in the same run. cpu-vs-no-secrets is the ratio of CPU times.
func BenchmarkProbeSecrets(b *testing.B) {
	urls := testservers.SpawnSelf(b, httpServersEnv, 4)
	o := Options{Timeout: time.Minute, Settle: time.Nanosecond}
	var next atomic.Int64
	probeWith := func(client *http.Client) func() error {
		return func() error {
			_, err := Probe(context.Background(), Target{URL: urls[next.Add(1)%int64(len(urls))], HTTPClient: client}, o)
			return err
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	plain := &http.Client{Transport: headerAdder{next: tr}} // the same request clone, no credential
	withSecrets := &http.Client{Transport: headerAdder{next: tr, h: http.Header{
		"Authorization": {"Bearer bench-0123456789-token"},
		"Cookie":        {"sid=bench-cookie-99887766"},
	}}}
	const conc = 16
	b.ReportAllocs()
	secrets := measure(b, b.N, conc, probeWith(withSecrets))
	none := measure(b, b.N, conc, probeWith(plain))
	n := float64(b.N)
	b.ReportMetric(secrets.cpu.Seconds()*1000/n, "cpu-ms/snapshot")
	b.ReportMetric(float64(secrets.mallocs)/n, "allocs/snapshot")
	b.ReportMetric(secrets.cpu.Seconds()/none.cpu.Seconds(), "cpu-vs-no-secrets")
	b.ReportMetric(float64(secrets.mallocs)/float64(none.mallocs), "allocs-vs-no-secrets")
}

// Server text the probe shortens ("…") may end inside a secret: what is left
// of it is redacted too.
func TestRedactorTruncatedSecret(t *testing.T) {
	const token = "trunc-0123456789-token"
	r := newRedactor(&Target{Headers: http.Header{"Authorization": {"Bearer " + token}}})
	for cut := minCutLen; cut < len(token); cut++ {
		got := r.text(contract.TruncateBytes("server says: Bearer "+token+" and more", len("server says: Bearer ")+cut))
		if strings.Contains(got, token[:cut]) || !strings.HasSuffix(got, redacted+"…") {
			t.Errorf("cut after %d bytes: %q", cut, got)
		}
	}
	if got := r.text(contract.TruncateBytes("a plain message that is long", 10)); got != "a plain me…" {
		t.Errorf("text without a secret changed: %q", got)
	}
}
