package witness

import (
	"strings"
	"unicode"
)

// A witness is printed in CI logs and pull-request comments and sent as a
// real call by replay: it must never hold anything that looks like a
// credential, even when a schema's pattern or enum describes one. Strings
// the generator makes are readable placeholders; every candidate is checked
// here before it is validated, and one that looks like a secret is dropped.

// secretPrefixes start well-known credential formats.
var secretPrefixes = []string{
	"sk-", "sk_live_", "sk_test_", "rk_live_", "pk_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"glpat-", "xoxb-", "xoxp-", "xoxa-", "xoxs-", "akia", "asia", "aiza", "ya29.", "eyj", "npm_", "hf_", "-----begin",
}

// looksLikeSecret reports strings shaped like credentials: a known prefix
// followed by a token, or a long unbroken run mixing letters and digits.
func looksLikeSecret(s string) bool {
	lower := strings.ToLower(s)
	for _, p := range secretPrefixes {
		if i := strings.Index(lower, p); i >= 0 && tokenRun(s[i+len(p):]) >= 8 {
			return true
		}
	}
	return tokenLike(s)
}

// tokenRun is the length of the run of token characters at the start of s.
func tokenRun(s string) int {
	for i, r := range s {
		if !isTokenChar(r) {
			return i
		}
	}
	return len(s)
}

func isTokenChar(r rune) bool {
	return r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("+/=_-.", r))
}

// tokenLike finds a run of 20 or more token characters that mixes digits
// with letters (or both letter cases): the shape of keys and hashes, not
// of words.
func tokenLike(s string) bool {
	run, digits, lower, upper := 0, false, false, false
	check := func() bool {
		classes := 0
		for _, b := range [...]bool{digits, lower, upper} {
			if b {
				classes++
			}
		}
		return run >= 20 && classes >= 2 && (digits || run >= 32)
	}
	for _, r := range s {
		if isTokenChar(r) {
			run++
			digits = digits || unicode.IsDigit(r)
			lower = lower || unicode.IsLower(r)
			upper = upper || unicode.IsUpper(r)
			continue
		}
		if check() {
			return true
		}
		run, digits, lower, upper = 0, false, false, false
	}
	return check()
}

// valueLooksSecret checks every string and member name in a value.
func valueLooksSecret(v any) bool {
	switch x := v.(type) {
	case string:
		return looksLikeSecret(x)
	case map[string]any:
		for k, m := range x {
			if looksLikeSecret(k) || valueLooksSecret(m) {
				return true
			}
		}
	case []any:
		for _, m := range x {
			if valueLooksSecret(m) {
				return true
			}
		}
	}
	return false
}
