package probe

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
)

// redacted replaces every configured secret in text the probe emits.
const redacted = "[REDACTED]"

// minSecretLen keeps short values ("1", "exit", "debug") from being treated as secrets:
// replacing them everywhere would garble messages and protect nothing.
const minSecretLen = 8

// redactor removes secrets from any text the probe puts into an error, a log
// record or a snapshot. Servers can echo what they were sent, so
// server-provided text goes through it too. It starts with what the target
// configures (header values, URL credentials and query, stdio environment
// values, Target.Secrets) and learns, as requests are written, the header
// values an HTTPClient's own transport adds (an auth extension's token,
// cookies from a jar), which nobody can configure in advance.
type redactor struct {
	mu      sync.Mutex
	learned map[string]bool // header values already learned (each request repeats them)
	secrets []string        // distinct, unordered
	r       *strings.Replacer
	forms   []string // the secrets and the spellings JSON may give them
}

func newRedactor(t *Target) *redactor {
	r := &redactor{}
	for _, vs := range t.Headers {
		r.learn(vs...)
	}
	if u, err := url.Parse(t.URL); err == nil {
		if u.User != nil {
			p, _ := u.User.Password()
			r.add(u.User.Username(), p)
		}
		for _, vs := range u.Query() {
			r.add(vs...)
		}
		r.add(u.RawQuery)
	}
	for _, kv := range t.Env {
		if _, v, ok := strings.Cut(kv, "="); ok {
			r.add(v)
		}
	}
	r.learn(t.Secrets...)
	return r
}

// publicHeaders are request headers whose values the probe or net/http
// choose and that carry no credential; every other header value written on
// the wire is treated as a secret.
var publicHeaders = map[string]bool{
	"Host": true, "Content-Type": true, "Content-Length": true, "Accept": true, "Accept-Encoding": true,
	"User-Agent": true, "Connection": true, "Transfer-Encoding": true, "Content-Encoding": true,
	"Mcp-Protocol-Version": true, "Mcp-Method": true, "Last-Event-Id": true,
	"Traceparent": true, "Tracestate": true,
}

// sentHeader records the values of a header as it was written on the wire
// (an httptrace hook: it sees what every RoundTripper added). HTTP/2 pseudo
// headers (":authority", ":path") name the endpoint, which errors must keep.
func (r *redactor) sentHeader(name string, values []string) {
	if !strings.HasPrefix(name, ":") && !publicHeaders[http.CanonicalHeaderKey(name)] {
		r.learn(values...)
	}
}

// receivedCookies records the values of cookies a server sets: the cookie
// jar sends them back, and a server may echo them in an error.
func (r *redactor) receivedCookies(h http.Header) {
	for _, c := range (&http.Response{Header: h}).Cookies() {
		r.add(c.Value)
	}
}

// learn adds credential-bearing values: each value, its words ("Bearer
// <token>"), the values of its name=value pairs (cookies, digest
// parameters), and the decoded user and password of Basic credentials.
func (r *redactor) learn(values ...string) {
	for _, v := range values {
		r.mu.Lock()
		seen := r.learned[v]
		if !seen {
			if r.learned == nil {
				r.learned = map[string]bool{}
			}
			r.learned[v] = true
		}
		r.mu.Unlock()
		if seen {
			continue
		}
		r.add(v)
		for _, w := range strings.FieldsFunc(v, func(c rune) bool { return c == ' ' || c == '\t' || c == ',' || c == ';' }) {
			r.add(w)
			if _, pv, ok := strings.Cut(w, "="); ok {
				r.add(strings.Trim(pv, `"`))
			}
		}
		if scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok && strings.EqualFold(scheme, "Basic") {
			if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
				user, pass, _ := strings.Cut(string(dec), ":")
				r.add(string(dec), user, pass)
			}
		}
	}
}

// add records secrets; values shorter than minSecretLen are not secrets.
func (r *redactor) add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) >= minSecretLen && !slices.Contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
			r.r = nil
		}
	}
}

// replacer returns the current replacer (nil when there is no secret) and
// the spellings to look for in JSON.
func (r *redactor) replacer() (*strings.Replacer, []string) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.r != nil || len(r.secrets) == 0 {
		return r.r, r.forms
	}
	r.forms = r.forms[:0]
	for _, s := range r.secrets {
		r.forms = append(r.forms, s)
		if js := jsonSpelling(s); js != s {
			r.forms = append(r.forms, js)
		}
		if strings.Contains(s, "/") { // JSON may escape the solidus
			r.forms = append(r.forms, strings.ReplaceAll(jsonSpelling(s), "/", `\/`))
		}
	}
	// Longest first, so a token inside a longer value cannot leave a tail.
	forms := slices.Clone(r.forms)
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(forms))
	for _, s := range forms {
		pairs = append(pairs, s, redacted)
	}
	r.r = strings.NewReplacer(pairs...)
	return r.r, r.forms
}

// jsonSpelling is s as it appears inside a JSON string.
func jsonSpelling(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(strings.TrimSpace(b.String()), `"`)[1:]
}

func (r *redactor) text(s string) string {
	rep, forms := r.replacer()
	if rep == nil {
		return s
	}
	return cutSecrets(rep.Replace(s), forms)
}

// minCutLen is the shortest part of a secret, left before a truncation
// mark, that is redacted.
const minCutLen = 4

// cutSecrets redacts what is left of a secret where server text was
// truncated ("…") inside it: the visible head of a token is still a leak.
func cutSecrets(s string, forms []string) string {
	const mark = "…"
	if !strings.Contains(s, mark) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, mark)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		head := s[:i]
		for _, f := range forms {
			for n := min(len(f)-1, len(head)); n >= minCutLen; n-- {
				if strings.HasSuffix(head, f[:n]) {
					head = head[:len(head)-n] + redacted
					break
				}
			}
		}
		b.WriteString(head + mark)
		s = s[i+len(mark):]
	}
}

// json returns raw with every secret inside its strings (member names and
// values) redacted, and whether there was any. A document that holds no
// secret is not touched; one that does is re-encoded (contract digests are
// of the canonical form, so only the redacted strings change them).
func (r *redactor) json(raw []byte) ([]byte, bool) {
	rep, forms := r.replacer()
	if rep == nil || !slices.ContainsFunc(forms, func(f string) bool { return bytes.Contains(raw, []byte(f)) }) {
		return raw, false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if dec.Decode(&v) != nil || enc.Encode(redactValue(v, rep)) != nil {
		return []byte(rep.Replace(string(raw))), true // not JSON: refused later, never quoted whole
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), true
}

func redactValue(v any, rep *strings.Replacer) any {
	switch x := v.(type) {
	case string:
		return rep.Replace(x)
	case []any:
		for i := range x {
			x[i] = redactValue(x[i], rep)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[rep.Replace(k)] = redactValue(e, rep)
		}
		return out
	}
	return v
}

// err returns err with its message redacted. A redacted error no longer
// wraps the original (whose text holds the secret); it keeps only the
// sentinels callers test with errors.Is.
func (r *redactor) err(err error) error {
	if err == nil {
		return err
	}
	msg := err.Error()
	clean := r.text(msg)
	if clean == msg {
		return err
	}
	re := &redactedError{msg: clean}
	for _, s := range keptSentinels {
		if errors.Is(err, s) {
			re.kept = append(re.kept, s)
		}
	}
	return re
}

// keptSentinels survive redaction so classification still works.
var keptSentinels = []error{
	context.Canceled, context.DeadlineExceeded, io.EOF, io.ErrUnexpectedEOF,
	canon.ErrTooLarge, canon.ErrTooDeep, contract.ErrTooMany, canon.ErrStringTooLong,
	canon.ErrDuplicateName, contract.ErrNoName, canon.ErrInvalidUTF8, contract.ErrNotAnObject,
	canon.ErrNumberRange, canon.ErrSyntax, contract.ErrUnknownFormat,
}

type redactedError struct {
	msg  string
	kept []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.kept }

// unwrapURLError drops net/http's *url.Error wrapper, whose message repeats
// the request URL with its query (which may hold an API key).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// jsonText is json without the flag.
func (r *redactor) jsonText(raw []byte) []byte {
	clean, _ := r.json(raw)
	return clean
}

// textPtr redacts an optional string.
func (r *redactor) textPtr(s *string) *string {
	if s == nil {
		return nil
	}
	clean := r.text(*s)
	return &clean
}

// Redactor removes a target's secrets from text that Probe does not produce
// (a receiver's own log lines and spans about the target).
type Redactor struct{ r *redactor }

// NewRedactor returns the Redactor for the secrets t configures: header
// values, URL credentials and query, environment values and Secrets.
func NewRedactor(t Target) *Redactor { return &Redactor{r: newRedactor(&t)} }

// Text returns s with every secret replaced by [REDACTED].
func (r *Redactor) Text(s string) string { return r.r.text(s) }
