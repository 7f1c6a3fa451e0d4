package hostconfig

import (
	"fmt"
	"sort"
	"strings"
)

// Diff returns the change as a unified diff (three lines of context), for
// --dry-run. The edits say exactly which lines changed, so no diff
// algorithm is needed: outside them old and new are the same.
func (r *Result) Diff(oldName, newName string) string {
	if !r.Changed() {
		return ""
	}
	old, nu := lines(string(r.Src)), lines(string(r.Out))
	type block struct{ oLo, oHi, nLo, nHi int } // changed lines, inclusive
	var blocks []block
	shift := 0
	for _, e := range r.Edits {
		ns, ne := e.Start+shift, e.Start+shift+len(e.Text)
		b := block{old.at(e.Start), old.at(e.End), nu.at(ns), nu.at(ne)}
		shift += len(e.Text) - (e.End - e.Start)
		for b.oLo <= b.oHi && b.nLo <= b.nHi && old.line(b.oLo) == nu.line(b.nLo) {
			b.oLo, b.nLo = b.oLo+1, b.nLo+1
		}
		for b.oLo <= b.oHi && b.nLo <= b.nHi && old.line(b.oHi) == nu.line(b.nHi) {
			b.oHi, b.nHi = b.oHi-1, b.nHi-1
		}
		if n := len(blocks); n > 0 && b.oLo <= blocks[n-1].oHi {
			blocks[n-1].oHi, blocks[n-1].nHi = max(blocks[n-1].oHi, b.oHi), max(blocks[n-1].nHi, b.nHi)
			continue
		}
		blocks = append(blocks, b)
	}
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	for i := 0; i < len(blocks); {
		j := i
		for j+1 < len(blocks) && blocks[j+1].oLo-blocks[j].oHi <= 2*context+1 {
			j++
		}
		pre := min(context, blocks[i].oLo)
		post := min(context, len(old.text)-1-blocks[j].oHi)
		oLo, oHi := blocks[i].oLo-pre, blocks[j].oHi+post
		nLo, nHi := blocks[i].nLo-pre, blocks[j].nHi+post
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(oLo, oHi), hunkRange(nLo, nHi))
		o := oLo
		for k := i; k <= j; k++ {
			b := blocks[k]
			for ; o < b.oLo; o++ {
				out.WriteString(" " + old.line(o))
			}
			for l := b.oLo; l <= b.oHi; l++ {
				out.WriteString("-" + old.line(l))
			}
			for l := b.nLo; l <= b.nHi; l++ {
				out.WriteString("+" + nu.line(l))
			}
			o = b.oHi + 1
		}
		for ; o <= oHi; o++ {
			out.WriteString(" " + old.line(o))
		}
		i = j + 1
	}
	return out.String()
}

// hunkRange writes lines lo..hi (from 0, inclusive) as a unified diff
// does: an empty range names the line before it.
func hunkRange(lo, hi int) string {
	if n := hi - lo + 1; n > 0 {
		return fmt.Sprintf("%d,%d", lo+1, n)
	}
	return fmt.Sprintf("%d,0", lo)
}

// text split into lines, with where each starts.
type textLines struct {
	text   []string
	starts []int
}

func lines(s string) textLines {
	var t textLines
	off := 0
	for _, l := range strings.SplitAfter(s, "\n") {
		if l == "" {
			continue
		}
		t.text = append(t.text, l)
		t.starts = append(t.starts, off)
		off += len(l)
	}
	return t
}

// at returns the index of the line holding byte off.
func (t textLines) at(off int) int {
	return max(0, sort.SearchInts(t.starts, off+1)-1)
}

// line returns line i ending in a newline.
func (t textLines) line(i int) string {
	if l := t.text[i]; strings.HasSuffix(l, "\n") {
		return l
	}
	return t.text[i] + "\n\\ No newline at end of file\n"
}
