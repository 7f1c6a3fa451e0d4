package canon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Canonical JSON (RFC 8785, JCS) is produced by the go-json-experiment jsontext
// canonicalizer: of the Go implementations we evaluated it is the only one
// that rejects repeated member names, invalid UTF-8 and trailing garbage, and
// it is the fastest. It rejects one input the digest recipe requires us to
// hash, though: a \u escape of an unpaired surrogate, which the recipe writes
// back as a lowercase \u escape (as ECMAScript's JSON.stringify does). Inputs
// that contain any surrogate escape take canonicalizeSurrogates instead, as do
// numbers that may overflow a double (jsontext clamps them to the largest
// double; we refuse them, since implementations of the recipe disagree), our
// own small canonicalizer; FuzzCanonicalize checks that both agree everywhere
// else.

// Canonicalize appends the canonical form of raw to dst. raw must be exactly
// one JSON value (surrounding whitespace allowed).
func (l Limits) Canonicalize(dst, raw []byte) ([]byte, error) {
	st, err := l.Scan(raw)
	if err != nil {
		return dst, err
	}
	return AppendScanned(dst, raw, st, l.MaxDepth)
}

// AppendScanned appends the canonical form of raw, a value (or a part of
// one) of a document Scan accepted with st: a listing is scanned once and
// each of its definitions canonicalized.
func AppendScanned(dst, raw []byte, st Stats, maxDepth int) ([]byte, error) {
	if st.SurrogateEscapes || st.HugeNumbers {
		return canonicalizeSurrogates(dst, raw, maxDepth)
	}
	start := len(dst)
	dst = append(dst, raw...)
	v := jsontext.Value(dst[start:])
	if err := v.Canonicalize(); err != nil {
		return dst[:start], TranslateJSONError(err)
	}
	// Canonicalize works in place when it can; when it reallocated, copy back.
	return append(dst[:start], v...), nil
}

// Digest returns the definition hash of raw under l: SHA-256 of the
// canonical form, lowercase hex.
func (l Limits) Digest(raw []byte) (string, error) {
	bp := Buffers.Get().(*[]byte)
	defer Buffers.Put(bp)
	c, err := l.Canonicalize((*bp)[:0], raw)
	*bp = c
	if err != nil {
		return "", err
	}
	return HashBytes(c), nil
}

// Buffers holds scratch buffers for canonical forms, so that digesting a
// listing does not allocate one per definition.
var Buffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// HashBytes is SHA-256 of b, lowercase hex.
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// HashString is SHA-256 of the UTF-8 bytes of s, lowercase hex: the recipe's
// instructions hash, and the set hash over its joined lines.
func HashString(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TranslateJSONError maps jsontext errors onto this package's sentinels while
// keeping position information for the message.
func TranslateJSONError(err error) error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return &positionError{Err: errors.Join(ErrSyntax, err)}
	}
	base := ErrSyntax
	switch {
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		base = ErrDuplicateName
	case isUTF8Error(se.Err):
		base = ErrInvalidUTF8
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		base = ErrSyntax
	case isRangeError(se.Err):
		base = ErrNumberRange
	}
	pe := &positionError{Offset: se.ByteOffset, Pointer: string(se.JSONPointer), Err: base}
	if base == ErrSyntax {
		pe.Err = &detailError{base: ErrSyntax, detail: se.Err}
	}
	return pe
}

// detailError is a sentinel with the library's own wording attached.
type detailError struct {
	base   error
	detail error
}

func (e *detailError) Error() string { return e.base.Error() + ": " + e.detail.Error() }
func (e *detailError) Unwrap() error { return e.base }

func isUTF8Error(err error) bool {
	return err != nil && bytes.Contains([]byte(err.Error()), []byte("UTF-8"))
}

func isRangeError(err error) bool {
	return err != nil && bytes.Contains([]byte(err.Error()), []byte("out of range"))
}
