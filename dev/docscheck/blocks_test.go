package docscheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// block is a fenced code block of a Markdown page.
type block struct {
	page   string // relative to the repository root
	line   int    // the opening fence's line, 1-based
	lang   string // what follows the opening fence ("yaml", "sh", "")
	marker string // the HTML comment on the line just above the fence, "" if none
	body   string // the lines between the fences, each ending in "\n"
	end    int    // the closing fence's line
}

func (b block) where() string { return fmt.Sprintf("%s:%d", b.page, b.line) }

// markerLine is a one-line HTML comment: "<!-- example: docs/examples/x.yaml -->".
var markerLine = regexp.MustCompile(`^<!-- (.+) -->$`)

// blockMarker is a marker these tests act on; it must precede a fence.
var blockMarker = regexp.MustCompile(`^<!-- (example|fragment|output|json|request): `)

// fencedBlocks returns the page's fenced blocks in order.
func fencedBlocks(page string, src []byte) ([]block, error) {
	var blocks []block
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	prev, n := "", 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if !strings.HasPrefix(text, "```") {
			if blockMarker.MatchString(prev) {
				return blocks, fmt.Errorf("%s:%d: %s is not followed by a fenced block", page, n-1, prev)
			}
			prev = text
			continue
		}
		b := block{page: page, line: n, lang: strings.TrimSpace(text[3:])}
		if m := markerLine.FindStringSubmatch(prev); m != nil {
			b.marker = m[1]
		}
		var body strings.Builder
		for sc.Scan() {
			n++
			if sc.Text() == "```" {
				b.end = n
				break
			}
			body.WriteString(sc.Text() + "\n")
		}
		if b.end == 0 {
			return blocks, fmt.Errorf("%s: block is not closed", b.where())
		}
		b.body = body.String()
		blocks = append(blocks, b)
		prev = ""
	}
	return blocks, sc.Err()
}

// docPages are the pages a user reads: README.md and docs/*.md.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, pages...)
}

// allBlocks returns every fenced block of every page.
func allBlocks(t *testing.T) []block {
	t.Helper()
	var all []block
	for _, page := range docPages(t) {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := fencedBlocks(rel(page), src)
		if err != nil {
			t.Error(err)
		}
		all = append(all, blocks...)
	}
	return all
}

// replaceBlocks rewrites the bodies of the given blocks of one page (for
// -update), keeping every other byte.
func replaceBlocks(src []byte, bodies map[int]string) []byte {
	lines := strings.SplitAfter(string(src), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		body, ok := bodies[i+1]
		if !ok {
			continue
		}
		out.WriteString(body)
		for i+1 < len(lines) && strings.TrimRight(lines[i+1], "\n") != "```" {
			i++
		}
	}
	return []byte(out.String())
}
