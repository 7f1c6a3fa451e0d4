package contract

import (
	"hash/fnv"
	"slices"
	"strings"
	"unicode"
)

// Rename detection: a removed tool whose definition reappears under a new
// name is one breaking rename, not a removal plus an unrelated addition.
// Real renames rarely keep the definition byte for byte (titles get added,
// descriptions reworded), so two passes:
//
//  1. the same schemas: input and output schemas with equal semantic
//     fingerprints (annotations ignored), when the input schema has at least
//     one property (two tools without parameters prove nothing);
//  2. for what is left, a similar name (token Jaccard ≥ 0.6), a similar
//     description (word Jaccard ≥ 0.75), or both moderately (≥ 0.3 and ≥ 0.5),
//     best pairs first.
//
// Pass 2 compares every pair, so it is skipped above maxRenamePairs.
const maxRenamePairs = 250_000

type renameCandidate struct {
	fp          fingerprint
	nonTrivial  bool
	nameTokens  []string
	descTokens  []string
	name, descr string
}

func newRenameCandidate(d Definition) renameCandidate {
	rc := renameCandidate{name: d.Key, nameTokens: tokens(d.Key, true)}
	v, err := parseValue(d.Raw)
	if err != nil || !v.isObject() {
		return rc
	}
	rc.descr, _ = v.str("description")
	rc.descTokens = tokens(rc.descr, false)
	in, out := v.get("inputSchema"), v.get("outputSchema")
	inDoc, outDoc := newSchemaDoc(in), newSchemaDoc(out)
	a, b := inDoc.fingerprint(in), outDoc.fingerprint(out)
	h := fnv.New128a()
	h.Write(a[:])
	h.Write(b[:])
	if out != nil {
		h.Write([]byte{1}) // an absent output schema differs from an empty one
	}
	copy(rc.fp[:], h.Sum(nil))
	props := inDoc.deref(in).get("properties")
	rc.nonTrivial = props.isObject() && len(props.names) > 0
	return rc
}

// detectRenames returns pairs of indexes (removed, added).
func detectRenames(removed, added []Definition) [][2]int {
	if len(removed) == 0 || len(added) == 0 {
		return nil
	}
	rs := make([]renameCandidate, len(removed))
	for i, d := range removed {
		rs[i] = newRenameCandidate(d)
	}
	as := make([]renameCandidate, len(added))
	for j, d := range added {
		as[j] = newRenameCandidate(d)
	}
	usedR, usedA := make([]bool, len(rs)), make([]bool, len(as))
	var pairs [][2]int
	// Pass 1: equal non-trivial schemas; among several, the most similar.
	byFP := map[fingerprint][]int{}
	for j, a := range as {
		if a.nonTrivial {
			byFP[a.fp] = append(byFP[a.fp], j)
		}
	}
	for i, r := range rs {
		if !r.nonTrivial {
			continue
		}
		best, bestScore := -1, -1.0
		for _, j := range byFP[r.fp] {
			if s := similarity(r, as[j]); !usedA[j] && s > bestScore {
				best, bestScore = j, s
			}
		}
		if best >= 0 {
			usedR[i], usedA[best] = true, true
			pairs = append(pairs, [2]int{i, best})
		}
	}
	// Pass 2: similar names or descriptions.
	if len(rs)*len(as) <= maxRenamePairs {
		type scored struct {
			i, j  int
			score float64
		}
		var cands []scored
		for i, r := range rs {
			for j, a := range as {
				if usedR[i] || usedA[j] {
					continue
				}
				name, desc := jaccard(r.nameTokens, a.nameTokens), jaccard(r.descTokens, a.descTokens)
				if name >= 0.6 || desc >= 0.75 || name >= 0.3 && desc >= 0.5 {
					cands = append(cands, scored{i, j, name + desc})
				}
			}
		}
		slices.SortStableFunc(cands, func(x, y scored) int {
			switch {
			case x.score > y.score:
				return -1
			case x.score < y.score:
				return 1
			}
			return strings.Compare(rs[x.i].name+"\x00"+as[x.j].name, rs[y.i].name+"\x00"+as[y.j].name)
		})
		for _, c := range cands {
			if !usedR[c.i] && !usedA[c.j] {
				usedR[c.i], usedA[c.j] = true, true
				pairs = append(pairs, [2]int{c.i, c.j})
			}
		}
	}
	slices.SortFunc(pairs, func(x, y [2]int) int { return x[0] - y[0] })
	return pairs
}

func similarity(a, b renameCandidate) float64 {
	return jaccard(a.nameTokens, b.nameTokens) + jaccard(a.descTokens, b.descTokens)
}

// tokens splits text into lowercase words; for names, camelCase and
// letter/digit boundaries split too ("getTinyImage" → get, tiny, image).
func tokens(s string, name bool) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 && (name || len(cur) > 1) {
			out = append(out, strings.ToLower(string(cur)))
		}
		cur = cur[:0]
	}
	var prev rune
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case name && len(cur) > 0 && (unicode.IsUpper(r) && unicode.IsLower(prev) || unicode.IsDigit(r) != unicode.IsDigit(prev)):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccard is |a∩b| / |a∪b| of two sorted, distinct token lists (0 when both
// are empty: no evidence).
func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			inter++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
