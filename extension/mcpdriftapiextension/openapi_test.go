package mcpdriftapiextension

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// spec is openapi.json, parsed once, with its schemas compiled as JSON
// Schema 2020-12 (what OpenAPI 3.1 schemas are).
type spec struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

var loadSpec = sync.OnceValues(func() (*spec, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openAPI))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://openapi.json", doc); err != nil {
		return nil, err
	}
	return &spec{doc: doc.(map[string]any), compiler: c, compiled: map[string]*jsonschema.Schema{}}, nil
})

func mustSpec(t testing.TB) *spec {
	t.Helper()
	s, err := loadSpec()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return s
}

// schema compiles a JSON pointer into the document.
func (s *spec) schema(t testing.TB, pointer string) *jsonschema.Schema {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[pointer]; ok {
		return sch
	}
	sch, err := s.compiler.Compile("mem://openapi.json#" + pointer)
	if err != nil {
		t.Fatalf("compile %s: %v", pointer, err)
	}
	s.compiled[pointer] = sch
	return sch
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// responseSchema is the pointer of the schema the document gives a route's
// response with a status, following a $ref to components/responses.
func (s *spec) responseSchema(t testing.TB, method, path string, status int) string {
	t.Helper()
	op := "/paths/" + escapePointer(path) + "/" + strings.ToLower(method)
	resp := s.lookup(t, op+"/responses/"+strconv.Itoa(status))
	ptr := op + "/responses/" + strconv.Itoa(status)
	if ref, ok := resp["$ref"].(string); ok {
		ptr = strings.TrimPrefix(ref, "#")
		resp = s.lookup(t, ptr)
	}
	if _, ok := resp["content"]; !ok {
		t.Fatalf("openapi.json: %s %s %d has no content", method, path, status)
	}
	return ptr + "/content/application~1json/schema"
}

// lookup resolves a JSON pointer to an object in the document.
func (s *spec) lookup(t testing.TB, pointer string) map[string]any {
	t.Helper()
	var cur any = s.doc
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("openapi.json has nothing at %s", pointer)
		}
		if cur, ok = m[tok]; !ok {
			t.Fatalf("openapi.json has nothing at %s (no %q)", pointer, tok)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("openapi.json: %s is not an object", pointer)
	}
	return m
}

// validate checks a JSON body against the schema at pointer.
func (s *spec) validate(t testing.TB, pointer string, body []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("not JSON (%v): %s", err, body)
	}
	if err := s.schema(t, pointer).Validate(inst); err != nil {
		t.Errorf("does not match openapi.json %s: %v\n%s", pointer, err, body)
	}
}

// checkResponse validates a handler's response against the document.
func checkResponse(t testing.TB, method, path string, status int, body []byte) {
	t.Helper()
	s := mustSpec(t)
	s.validate(t, s.responseSchema(t, method, path, status), body)
}

// TestOpenAPIRoutes: the document describes exactly the routes served.
func TestOpenAPIRoutes(t *testing.T) {
	s := mustSpec(t)
	var documented, served []string
	for path, item := range s.doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, rt := range (&apiExtension{}).routes() {
		served = append(served, rt.method+" "+rt.path)
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Errorf("openapi.json documents\n  %s\nthe router serves\n  %s", strings.Join(documented, "\n  "), strings.Join(served, "\n  "))
	}
}

// TestOpenAPIExamples: every example a front end is built against matches
// the schema of the response it illustrates.
func TestOpenAPIExamples(t *testing.T) {
	s := mustSpec(t)
	examples := map[string]string{ // file -> schema
		"info.json":              "Info",
		"servers.json":           "ServerList",
		"server.json":            "ServerDetail",
		"drifts.json":            "DriftPage",
		"drift.json":             "DriftDetail",
		"impact.json":            "Impact",
		"impact_no_callers.json": "Impact",
		"digests.json":           "DigestUsage",
		"variant_impact.json":    "VariantImpact",
		"accept.json":            "AcceptResult",
		"accept_request.json":    "AcceptRequest",
		"error_400.json":         "Error",
		"error_404.json":         "Error",
		"error_409.json":         "Error",
		"error_503.json":         "Error",
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		schema, ok := examples[name]
		if !ok {
			t.Errorf("%s: no schema says what it is an example of (add it to this test)", f)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s.validate(t, "/components/schemas/"+schema, b)
	}
	// Every example the document names exists.
	re := regexp.MustCompile(`"externalValue":\s*"([^"]+)"`)
	for _, m := range re.FindAllSubmatch(openAPI, -1) {
		if _, err := os.Stat(string(m[1])); err != nil {
			t.Errorf("openapi.json names example %s: %v", m[1], err)
		}
	}
	if !json.Valid(openAPI) {
		t.Error("openapi.json is not JSON")
	}
}
