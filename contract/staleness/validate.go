package staleness

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/mcpdrift/mcpdrift/contract"
)

// Arguments are a call's arguments read once, to be validated against
// several definitions.
type Arguments struct {
	inst any
	ok   bool
}

// ReadArguments reads a tools/call's arguments member (nil or JSON null:
// an empty object, as servers take it).
func ReadArguments(raw []byte) Arguments {
	if len(raw) == 0 || string(raw) == "null" {
		return Arguments{inst: map[string]any{}, ok: true}
	}
	inst, ok := decode(raw, 0)
	return Arguments{inst: inst, ok: ok}
}

// Violation is where arguments fail a schema: a location and a keyword,
// never a value.
type Violation struct {
	// Path is the JSON pointer into the arguments ("" is the object itself).
	Path string
	// Keyword is the failing keyword ("required", "type"; for keywords
	// with members, its path: "dependentRequired/b").
	Keyword string
	// Members are the member names the keyword names: the missing ones of
	// required, the refused ones of additionalProperties.
	Members []string
	// schemaAt is the failing keyword's JSON pointer in the schema, as the
	// validator resolved it (through $ref).
	schemaAt string
	inst     []string
}

// String is "/q: type", as mcpdrift.guard.violation records it.
func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "/"
	}
	return contract.TruncateBytes(p+": "+v.Keyword, 256)
}

// Validate reports whether args satisfy sch and, if not, the first of the
// validator's most specific errors (deepest location first, then in
// lexical order, so the answer does not depend on map order). A schema
// that makes the validator panic counts as rejecting the arguments.
func Validate(sch *jsonschema.Schema, args Arguments) (ok bool, v Violation) {
	if !args.ok {
		return false, Violation{Keyword: "arguments are not JSON"}
	}
	defer func() {
		if r := recover(); r != nil {
			ok, v = false, Violation{Keyword: fmt.Sprintf("validator failed: %v", r)}
		}
	}()
	err := sch.Validate(args.inst)
	if err == nil {
		return true, Violation{}
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return false, Violation{Keyword: "invalid"}
	}
	leaf := firstLeaf(ve)
	v = Violation{Path: pointer(leaf.InstanceLocation), Keyword: "invalid", inst: leaf.InstanceLocation}
	if leaf.ErrorKind != nil {
		kp := leaf.ErrorKind.KeywordPath()
		if len(kp) > 0 {
			v.Keyword = strings.Join(kp, "/")
		}
		_, frag, _ := strings.Cut(leaf.SchemaURL, "#")
		v.schemaAt = frag + pointer(kp)
		switch k := leaf.ErrorKind.(type) {
		case *kind.Required:
			v.Members = slices.Sorted(slices.Values(k.Missing))
		case *kind.AdditionalProperties:
			v.Members = slices.Sorted(slices.Values(k.Properties))
		}
	}
	return false, v
}

// maxLeaves bounds the errors firstLeaf looks at.
const maxLeaves = 256

// firstLeaf is the deepest, then lexically first, of the leaf errors.
func firstLeaf(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	var best *jsonschema.ValidationError
	n := 0
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if n >= maxLeaves {
			return
		}
		if len(e.Causes) == 0 {
			n++
			if best == nil || before(e, best) {
				best = e
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return best
}

func before(a, b *jsonschema.ValidationError) bool {
	if len(a.InstanceLocation) != len(b.InstanceLocation) {
		return len(a.InstanceLocation) > len(b.InstanceLocation)
	}
	if c := slices.Compare(a.InstanceLocation, b.InstanceLocation); c != 0 {
		return c < 0
	}
	return keyword(a) < keyword(b)
}

func keyword(e *jsonschema.ValidationError) string {
	if e.ErrorKind == nil {
		return ""
	}
	return strings.Join(e.ErrorKind.KeywordPath(), "/")
}

// pointer joins reference tokens into a JSON pointer.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointer(t))
	}
	return b.String()
}

func escapePointer(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(t)
}

func lastSegment(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(p[i+1:])
}
