package witness

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
)

// JSON Schema patterns are matched by the validator with Go's regexp (the
// library's default engine), so the generator parses them the same way and
// synthesizes strings from the syntax tree: each variant makes different
// choices at alternations, optional parts and character classes, so that
// a few variants cover the different shapes a pattern allows.

// maxPatternBytes bounds a pattern the generator will parse.
const maxPatternBytes = 4096

// maxSynthRunes bounds a synthesized string.
const maxSynthRunes = 512

var errPatternTooLong = errors.New("pattern too long")

func compilePattern(p string) (*regexp.Regexp, error) {
	if len(p) > maxPatternBytes {
		return nil, errPatternTooLong
	}
	return regexp.Compile(p)
}

// synthesize returns a string that matches pattern p, made with choice
// variant v; ok is false when the pattern cannot be parsed or needs a
// string too long.
func synthesize(p string, v int) (string, bool) {
	if len(p) > maxPatternBytes {
		return "", false
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", false
	}
	s := &synth{choices: v}
	s.walk(re.Simplify(), 0)
	if s.failed || s.b.Len() > 4*maxSynthRunes {
		return "", false
	}
	return s.b.String(), true
}

type synth struct {
	b       strings.Builder
	choices int // consumed bit by bit at each decision
	failed  bool
	runes   int
}

// choose takes the next decision among n options.
func (s *synth) choose(n int) int {
	if n <= 1 {
		return 0
	}
	c := s.choices % n
	s.choices /= n
	return c
}

func (s *synth) emit(r rune) {
	if s.runes++; s.runes > maxSynthRunes {
		s.failed = true
		return
	}
	s.b.WriteRune(r)
}

func (s *synth) walk(re *syntax.Regexp, depth int) {
	if s.failed || depth > maxDepth {
		s.failed = true
		return
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			s.emit(r)
		}
	case syntax.OpCharClass:
		s.emit(pickRune(re.Rune, s.choose(2)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		s.emit([]rune{'a', 'x'}[s.choose(2)])
	case syntax.OpCapture:
		s.walk(re.Sub[0], depth+1)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			s.walk(sub, depth+1)
		}
	case syntax.OpAlternate:
		s.walk(re.Sub[s.choose(len(re.Sub))], depth+1)
	case syntax.OpStar:
		for range s.choose(2) {
			s.walk(re.Sub[0], depth+1)
		}
	case syntax.OpPlus:
		for range 1 + s.choose(2) {
			s.walk(re.Sub[0], depth+1)
		}
	case syntax.OpQuest:
		if s.choose(2) == 1 {
			s.walk(re.Sub[0], depth+1)
		}
	case syntax.OpRepeat:
		n := re.Min
		if re.Max != re.Min && s.choose(2) == 1 {
			n++ // one more than the minimum (Max is -1 when unbounded)
		}
		if n > maxSynthRunes {
			s.failed = true
			return
		}
		for range n {
			s.walk(re.Sub[0], depth+1)
		}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
	case syntax.OpNoMatch:
		s.failed = true
	}
}

// pickRune chooses a readable rune from a character class (pairs of
// ranges): a lowercase letter, an uppercase letter or a digit when the
// class has one, else its first printable rune. Variant 1 prefers the
// second kind the class offers, so variants differ.
func pickRune(ranges []rune, variant int) rune {
	var found []rune
	for _, want := range [...][2]rune{{'a', 'z'}, {'A', 'Z'}, {'0', '9'}} {
		for i := 0; i+1 < len(ranges); i += 2 {
			lo, hi := max(ranges[i], want[0]), min(ranges[i+1], want[1])
			if lo <= hi {
				found = append(found, lo)
				break
			}
		}
	}
	if len(found) > 0 {
		return found[min(variant, len(found)-1)]
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := max(ranges[i], 0x21); r <= ranges[i+1] && r < ranges[i]+256; r++ {
			if unicode.IsPrint(r) {
				return r
			}
		}
	}
	if len(ranges) > 0 {
		return ranges[0]
	}
	return 'a'
}
