package probe

import (
	"context"
	"errors"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
)

// redacted replaces every configured secret in text the probe emits.
const redacted = "[REDACTED]"

// minSecretLen keeps short values ("1", "exit", "debug") from being treated as secrets:
// replacing them everywhere would garble messages and protect nothing.
const minSecretLen = 8

// redactor removes configured secrets (header values and their words, URL
// credentials and query values, stdio environment values) from any text the
// probe puts into an error, a log record or a snapshot. Servers can echo what
// they were sent, so server-provided text goes through it too.
type redactor struct {
	r *strings.Replacer
}

func newRedactor(t *Target) *redactor {
	var secrets []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= minSecretLen {
			secrets = append(secrets, v)
		}
	}
	for _, vs := range t.Headers {
		for _, v := range vs {
			add(v)
			for _, w := range strings.Fields(v) { // "Bearer <token>": the token alone too
				add(w)
			}
		}
	}
	if u, err := url.Parse(t.URL); err == nil {
		if u.User != nil {
			add(u.User.Username())
			p, _ := u.User.Password()
			add(p)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v)
			}
		}
		add(u.RawQuery)
	}
	for _, kv := range t.Env {
		if _, v, ok := strings.Cut(kv, "="); ok {
			add(v)
		}
	}
	if len(secrets) == 0 {
		return &redactor{}
	}
	// Longest first, so a token inside a longer value cannot leave a tail.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range slices.Compact(secrets) {
		pairs = append(pairs, s, redacted)
	}
	return &redactor{r: strings.NewReplacer(pairs...)}
}

func (r *redactor) text(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// err returns err with its message redacted. A redacted error no longer
// wraps the original (whose text holds the secret); it keeps only the
// sentinels callers test with errors.Is.
func (r *redactor) err(err error) error {
	if err == nil || r == nil || r.r == nil {
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
	contract.ErrTooLarge, contract.ErrTooDeep, contract.ErrTooMany, contract.ErrStringTooLong,
	contract.ErrDuplicateName, contract.ErrNoName, contract.ErrInvalidUTF8, contract.ErrNotAnObject,
	contract.ErrNumberRange, contract.ErrSyntax, contract.ErrUnknownFormat,
}

type redactedError struct {
	msg  string
	kept []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.kept }

// SanitizeURL returns u without user info, query or fragment: the form that
// may appear in snapshots, errors and logs.
func SanitizeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User = nil
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	u.RawFragment = ""
	return u.String()
}

// unwrapURLError drops net/http's *url.Error wrapper, whose message repeats
// the request URL with its query (which may hold an API key).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
