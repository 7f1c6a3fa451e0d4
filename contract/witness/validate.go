package witness

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// CompileOptions say how Compile treats a schema.
type CompileOptions struct {
	// AssertFormat makes "format" a constraint in every draft (draft-07 and
	// older assert it anyway; 2019-09 and 2020-12 treat it as an
	// annotation unless asked).
	AssertFormat bool
}

// Compile compiles a JSON Schema document the way mcpdrift validates tool
// arguments everywhere (the interceptor's guard, witnesses, replay): with
// santhosh-tekuri/jsonschema, draft 2020-12 unless the schema names another
// draft, and references resolved only within the document (a server's
// schema must not make mcpdrift read files or fetch URLs). loc names the
// document in errors.
func Compile(schema []byte, loc string, o CompileOptions) (sch *jsonschema.Schema, err error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if o.AssertFormat {
		c.AssertFormat()
	}
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	defer func() {
		// Schemas come from servers: a compiler bug must not take the
		// caller down.
		if r := recover(); r != nil {
			sch, err = nil, fmt.Errorf("the schema could not be compiled: %v", r)
		}
	}()
	return c.Compile(loc)
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q not loaded", url)
}

// verdict is one validation: valid, or the leaf errors in a stable order.
type verdict struct {
	valid  bool
	leaves []leafError
}

// leafError is one of the validator's most specific errors.
type leafError struct {
	at  []string // instance location
	msg string
}

func (l leafError) String() string {
	if len(l.at) == 0 {
		return truncate(l.msg, maxReason)
	}
	return truncate("/"+strings.Join(l.at, "/")+": "+l.msg, maxReason)
}

// reason is the first leaf error at or under loc, else the first one.
func (v verdict) reason(loc []string) (string, bool) {
	for _, l := range v.leaves {
		if len(l.at) >= len(loc) && slices.Equal(l.at[:len(loc)], loc) {
			return l.String(), true
		}
	}
	if len(v.leaves) == 0 {
		return "invalid", false
	}
	return v.leaves[0].String(), false
}

var printer = message.NewPrinter(language.English)

// validate judges a generator value; a panic in the validator counts as
// invalid, so a hostile schema cannot crash the caller.
func validate(sch *jsonschema.Schema, inst any) (v verdict) {
	defer func() {
		if r := recover(); r != nil {
			v = verdict{leaves: []leafError{{msg: fmt.Sprintf("validator failed: %v", r)}}}
		}
	}()
	err := sch.Validate(inst)
	if err == nil {
		return verdict{valid: true}
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return verdict{leaves: []leafError{{msg: err.Error()}}}
	}
	return verdict{leaves: leafErrors(ve)}
}

// maxReason bounds a reason's length.
const maxReason = 300

// leafErrors lists the validator's leaf errors deepest first, then in
// lexical order, so a reason does not depend on the validator's map
// iteration order.
func leafErrors(ve *jsonschema.ValidationError) []leafError {
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError, depth int)
	walk = func(e *jsonschema.ValidationError, depth int) {
		if len(e.Causes) == 0 || depth > maxDepth {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c, depth+1)
		}
	}
	walk(ve, 0)
	out := make([]leafError, 0, len(leaves))
	for _, l := range leaves {
		out = append(out, leafError{at: l.InstanceLocation, msg: l.ErrorKind.LocalizedString(printer)})
	}
	slices.SortStableFunc(out, func(a, b leafError) int {
		if len(a.at) != len(b.at) {
			return len(b.at) - len(a.at)
		}
		if c := slices.Compare(a.at, b.at); c != 0 {
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// compileError says in one line why a schema did not compile: for a schema
// that its metaschema rejects, where and why.
func compileError(err error) string {
	var se *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &se) && errors.As(se.Err, &ve) {
		if leaves := leafErrors(ve); len(leaves) > 0 {
			return "not valid JSON Schema (2020-12 unless $schema names another draft): " + leaves[0].String()
		}
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return truncate(msg, maxReason)
}
