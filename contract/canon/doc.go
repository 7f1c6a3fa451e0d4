// Package canon is canonical JSON as the definition digest recipe needs it:
// RFC 8785 (JCS) canonical forms under limits (Limits.Scan, Canonicalize),
// SHA-256 digests of them (Digest, HashString), and keys that keep unpaired
// surrogates apart (UnquoteKey, KeyUTF8, AppendJSONKey). The classifier that
// compares definitions is package contract, which builds on this one.
package canon
