package contract

import (
	"github.com/mcpdrift/mcpdrift/contract/internal/safetext"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Suspicious-text heuristics. Descriptions and instructions are read by a
// model: a rug-pull server can add hidden instructions to them without
// failing a single call. The heuristics are a data table so they can be
// reviewed, documented (docs/rules.md) and extended in one place; every hit
// names its heuristic.

// Heuristic describes one suspicious-text check.
type Heuristic struct {
	ID          string
	Description string
	find        func(text string, opts ScanOptions) []string
}

// TextHit is one match of a heuristic in a text.
type TextHit struct {
	// Heuristic is the ID of the heuristic that matched.
	Heuristic string `json:"heuristic"`
	// Match is the matched text, raw (escape it with SanitizeText to show it).
	Match string `json:"match"`
}

// ScanOptions tune ScanText.
type ScanOptions struct {
	// ToolNames are names of other tools; a text that mentions one (as a
	// whole word, case-sensitive) references another tool. Only names that
	// look like identifiers (with _ - . a digit or an inner capital) are
	// used, so a tool called "search" does not flag the English word.
	ToolNames []string
	// Self is the name of the tool whose text is scanned; it is not a
	// reference to another tool.
	Self string
}

// maxHitsPerHeuristic bounds what one heuristic reports for one text.
const maxHitsPerHeuristic = 8

// Heuristics returns the suspicious-text table.
func Heuristics() []Heuristic { return slices.Clone(heuristicTable()) }

// ScanText runs every heuristic over text and returns the hits, grouped by
// heuristic in table order, each distinct match once.
func ScanText(text string, opts ScanOptions) []TextHit {
	var hits []TextHit
	if text == "" {
		return nil
	}
	for _, h := range heuristicTable() {
		seen := map[string]bool{}
		for _, m := range h.find(text, opts) {
			if seen[m] || len(seen) >= maxHitsPerHeuristic {
				continue
			}
			seen[m] = true
			hits = append(hits, TextHit{Heuristic: h.ID, Match: m})
		}
	}
	return hits
}

// NewHits returns the hits in after that before does not have (same
// heuristic and same match): a URL or hidden block that was already there
// is not new, a new or edited one is.
func NewHits(before, after []TextHit) []TextHit { return without(after, before) }

// FormatHits renders hits for a message: heuristic ID and a short, escaped
// excerpt of the match, e.g. `external_url "https://x.example/a"`.
func FormatHits(hits []TextHit) string {
	parts := make([]string, 0, len(hits))
	for _, h := range hits {
		parts = append(parts, h.Heuristic+" "+QuoteForDisplay(TruncateRunes(h.Match, 48)))
	}
	return strings.Join(parts, ", ")
}

// TruncateRunes cuts s to n runes, marking a cut with "…".
func TruncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// TruncateBytes cuts s to at most n bytes on a character boundary, marking
// a cut with "…": for text bounded by size (span statuses, error messages,
// a result's text).
func TruncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// heuristicTable is immutable data; the patterns are compiled once.
var heuristicTable = sync.OnceValue(func() []Heuristic {
	return []Heuristic{
		{ID: "hidden_instruction_tag", Description: "tags that frame hidden instructions, such as <IMPORTANT>, <SYSTEM>, <instructions>, <secret>; the match includes the enclosed text, so an edit inside the block is a new hit", find: findTagBlocks},
		{ID: "chat_template_token", Description: "chat-template control tokens that try to open a new turn or role: <|im_start|>, [INST], <<SYS>>, <|system|>", find: regexFinder(`(?i)<\|[a-z_]{2,20}\|>|\[/?INST\]|<</?SYS>>`)},
		{ID: "instruction_override", Description: `phrases that override the agent's instructions: "ignore previous instructions", "disregard all prior rules", "you are now", "new instructions:"`, find: regexFinder(`(?i)\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|other|system|original)\s+(?:instructions?|prompts?|rules|directions|messages?|guidelines|context)\b|(?i)\byou\s+are\s+now\b|(?i)\bnew\s+instructions?\s*:`)},
		{ID: "concealment", Description: `phrases that hide actions from the user: "do not tell the user", "without informing the user", "the user must not know", "hide this"`, find: regexFinder(`(?i)\b(?:do\s+not|don'?t|never|without)\s+(?:tell|telling|inform|informing|mention|mentioning|reveal|revealing|show|showing|notify|notifying|alert|alerting|let|letting)\s+(?:\w+\s+){0,2}?(?:the\s+)?users?\b|(?i)\bthe\s+users?\s+(?:must|should|need)\s+not\s+(?:know|see|be\s+told)\b|(?i)\b(?:hide|conceal)\s+(?:this|it|these|that)\s+from\b`)},
		{ID: "secret_reference", Description: "references to secrets: API keys, tokens, passwords, private keys, credentials, seed phrases, and environment variables named *SECRET*, *TOKEN*, *PASSWORD*, *API_KEY*", find: regexFinder(`\b(?i:api[_ -]?keys?|access[_ -]?tokens?|auth[_ -]?tokens?|bearer\s+tokens?|secret[_ -]?keys?|private[_ -]?keys?|passwords?|passphrases?|credentials?|session\s+cookies?|seed\s+phrases?|mnemonic\s+phrases?)\b|\b[A-Z][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|ACCESS_KEY)[A-Z0-9_]*\b`)},
		{ID: "credential_path", Description: "paths of credential and agent-configuration files: ~/.ssh, id_rsa, ~/.aws, .env, .npmrc, .netrc, /etc/passwd, mcp.json, claude_desktop_config.json", find: findCredentialPaths},
		{ID: "external_url", Description: "URLs (http, https, ws, wss, ftp); only a URL that was not in the old text is new", find: findURLs},
		{ID: "base64_blob", Description: "long base64 or base64url runs (80+ characters mixing digits and both cases) that can smuggle encoded instructions", find: findBase64},
		{ID: "invisible_character", Description: "zero-width, bidi-override, tag, variation-selector and other invisible or control characters (other than newline and tab)", find: findInvisible},
		{ID: "cross_tool_reference", Description: `references to other tools or servers: "other tools", "any MCP server", "instead of using the X tool", and names of the server's other tools`, find: findToolReferences},
	}
})

func regexFinder(pattern string) func(string, ScanOptions) []string {
	re := regexp.MustCompile(pattern)
	return func(text string, _ ScanOptions) []string {
		return re.FindAllString(text, maxHitsPerHeuristic*4)
	}
}

var tagOpen = regexp.MustCompile(`(?i)<\s*/?\s*(important|system|instructions?|secret|hidden|admin|override|critical|sudo)\b[^<>]{0,80}>`)

// findTagBlocks matches an opening tag with everything up to its closing tag
// (bounded), so that an edit inside a hidden block is a new hit.
func findTagBlocks(text string, _ ScanOptions) []string {
	var out []string
	covered := 0 // end of the last block: its closing tag is no hit of its own
	for _, loc := range tagOpen.FindAllStringSubmatchIndex(text, maxHitsPerHeuristic*4) {
		start, end := loc[0], loc[1]
		if start < covered {
			continue
		}
		tag := strings.ToLower(text[loc[2]:loc[3]])
		if strings.HasPrefix(strings.TrimLeft(text[start+1:], " \t"), "/") {
			out = append(out, text[start:end]) // a stray closing tag
			continue
		}
		rest := text[end:]
		if i := strings.Index(strings.ToLower(rest), "</"+tag); i >= 0 && i <= 2000 {
			if j := strings.IndexByte(rest[i:], '>'); j >= 0 {
				end += i + j + 1
			}
		} else {
			end += min(len(rest), 200)
		}
		out = append(out, text[start:end])
		covered = end
	}
	return out
}

// credentialPath matches a credential file path; the leading group keeps
// "process.env" (a dot after a word) from matching ".env".
var credentialPath = regexp.MustCompile("(?i)(?:^|[^\\w.])((?:~|\\$HOME|%USERPROFILE%)?[/\\\\]?\\.(?:ssh|aws|gnupg|kube|docker|npmrc|netrc|pgpass|git-credentials|env)\\b[^\\s\"'`]*|\\bid_(?:rsa|ed25519|ecdsa|dsa)\\b|/etc/(?:passwd|shadow)\\b|\\b(?:claude_desktop_config|mcp)\\.json\\b|\\.cursor/)")

func findCredentialPaths(text string, _ ScanOptions) []string {
	var out []string
	for _, m := range credentialPath.FindAllStringSubmatch(text, maxHitsPerHeuristic*4) {
		out = append(out, m[1])
	}
	return out
}

var urlPattern = regexp.MustCompile("(?i)\\b(?:https?|wss?|ftp)://[^\\s\"'<>()\\[\\]{}`]+")

func findURLs(text string, _ ScanOptions) []string {
	urls := urlPattern.FindAllString(text, maxHitsPerHeuristic*4)
	for i, u := range urls {
		urls[i] = strings.TrimRight(u, ".,;:!?*_")
	}
	return urls
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{80,}={0,2}`)

func findBase64(text string, _ ScanOptions) []string {
	var out []string
	for _, m := range base64Run.FindAllString(text, maxHitsPerHeuristic*4) {
		var digit, upper, lower bool
		for _, r := range m {
			digit = digit || unicode.IsDigit(r)
			upper = upper || unicode.IsUpper(r)
			lower = lower || unicode.IsLower(r)
		}
		if digit && upper && lower {
			out = append(out, m)
		}
	}
	return out
}

func findInvisible(text string, _ ScanOptions) []string {
	if !HasInvisible(text) {
		return nil
	}
	var out []string
	for _, r := range text {
		if r != '\n' && r != '\t' && r != '\r' && safetext.NeedsEscape(r) {
			out = append(out, string(r))
		}
	}
	return out
}

var (
	otherToolsPhrase = regexp.MustCompile(`(?i)\b(?:other|another|all|any|every)\s+(?:mcp\s+)?(?:tools?|servers?|functions?|assistants?)\b`)
	namedToolPhrase  = regexp.MustCompile("(?i)\\b(?:instead\\s+of|rather\\s+than|before|after|whenever|when)\\s+(?:using|calling|invoking|running)\\s+(?:the\\s+)?`?([\\w.-]+)`?\\s+tool\\b")
)

func findToolReferences(text string, opts ScanOptions) []string {
	out := otherToolsPhrase.FindAllString(text, maxHitsPerHeuristic*4)
	for _, m := range namedToolPhrase.FindAllStringSubmatch(text, maxHitsPerHeuristic*4) {
		if w := strings.ToLower(m[1]); w != "this" && w != "that" && w != "the" {
			out = append(out, m[0])
		}
	}
	for _, name := range opts.ToolNames {
		if name != opts.Self && identifierLike(name) && containsWord(text, name) {
			out = append(out, name)
		}
	}
	return out
}

// identifierLike reports names that are unlikely to be plain English words.
func identifierLike(name string) bool {
	if len(name) < 3 {
		return false
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || unicode.IsDigit(r):
			return true
		case unicode.IsUpper(r) && prevLower:
			return true
		}
		prevLower = unicode.IsLower(r)
	}
	return false
}

// containsWord reports whether word occurs in text with no letter, digit or
// underscore on either side.
func containsWord(text, word string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		i = start + 1
	}
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}
