package docscheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A YAML block in README.md or docs/*.md is one of:
//
//	<!-- example: docs/examples/x.yaml -->  a whole Collector configuration,
//	    the file TestExamplesValidate validates (TestDocsShowValidatedFiles);
//	<!-- fragment: collector -->  part of a Collector configuration: completed
//	    by completeFragment, then validated by otelcol-mcpdrift;
//	<!-- fragment: policy -->  a drift policy: validated as the mcpdrift
//	    receiver's policy;
//	<!-- fragment: receiver_creator -->  a receiver_creator configuration (not
//	    in otelcol-mcpdrift): each templated mcpdrift config is validated as
//	    the receiver the creator would start for the observed endpoint;
//	<!-- fragment: ocb -->  ocb manifest entries: each must be a component
//	    builder-config.yaml builds, from the same module;
//	<!-- fragment: action -->  a GitHub Actions step using this repository: its
//	    inputs must be inputs of action.yml.
//
// Any other YAML block fails TestYAMLBlocksChecked with its file:line.
var fragmentChecks = map[string]func(t *testing.T, b block){
	"collector":        checkCollectorFragment,
	"policy":           checkPolicyFragment,
	"receiver_creator": checkReceiverCreatorFragment,
	"ocb":              checkOCBFragment,
	"action":           checkActionFragment,
}

func TestYAMLBlocksChecked(t *testing.T) {
	checked := 0
	for _, b := range allBlocks(t) {
		if b.lang != "yaml" && b.lang != "yml" {
			continue
		}
		kind, isFragment := strings.CutPrefix(b.marker, "fragment: ")
		switch {
		case strings.HasPrefix(b.marker, "example: "):
			// TestDocsShowValidatedFiles compares it with the validated file.
		case isFragment && fragmentChecks[kind] != nil:
			t.Run(b.where(), func(t *testing.T) { fragmentChecks[kind](t, b) })
			checked++
		case isFragment:
			t.Errorf("%s: unknown fragment kind %q (one of %v)", b.where(), kind, slices.Sorted(mapKeys(fragmentChecks)))
		default:
			t.Errorf("%s: a YAML block that nothing checks: make it a file under docs/examples shown with <!-- example: PATH -->, or mark it <!-- fragment: KIND --> (KIND one of %v)",
				b.where(), slices.Sorted(mapKeys(fragmentChecks)))
		}
	}
	if checked == 0 {
		t.Error("no fragment found: the scan is broken")
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sections are the component sections of a Collector configuration.
var sections = []string{"receivers", "processors", "exporters", "extensions", "connectors"}

// signals are the pipeline types a completed fragment may need.
var signals = []string{"traces", "metrics", "logs"}

// standIns configure the components a fragment uses but leaves to the rest
// of the reader's configuration (the quickstart's, usually). A fragment that
// uses a type not listed here must define it. DIR is a scratch directory.
var standIns = map[string]string{
	"otlp":         `{protocols: {grpc: {endpoint: "127.0.0.1:4317"}, http: {endpoint: "127.0.0.1:4318"}}}`,
	"mcpdrift":     `{targets: [{name: docs, endpoint: "http://127.0.0.1:3001/mcp"}]}`,
	"mcpimpact":    `{}`,
	"batch":        `{}`,
	"debug":        `{}`,
	"prometheus":   `{endpoint: "127.0.0.1:9464"}`,
	"file_storage": `{directory: DIR}`,
	"mcpdrift_api": `{}`,
}

// componentType is the type part of a component ID ("otlp_grpc/jaeger" → "otlp_grpc").
func componentType(id string) string {
	typ, _, _ := strings.Cut(id, "/")
	return typ
}

// completeFragment makes a whole configuration of a fragment:
//   - a component the service uses but the fragment does not define gets
//     its stand-in;
//   - without service.extensions, every defined extension is enabled;
//   - components no pipeline uses get pipelines of their own, one per
//     signal they support (per the distribution's `components`), with a
//     stand-in receiver or a debug exporter where the fragment has none.
//
// What the fragment says is never changed, only added to.
func completeFragment(t *testing.T, dist string, frag map[string]any) map[string]any {
	t.Helper()
	support := componentSignals(t, dist)
	cfg := map[string]any{}
	for k, v := range frag {
		cfg[k] = v
	}
	section := func(name string) map[string]any {
		m, _ := cfg[name].(map[string]any)
		if m == nil {
			m = map[string]any{}
			cfg[name] = m
		}
		return m
	}
	service := section("service")
	pipelines, _ := service["pipelines"].(map[string]any)
	if pipelines == nil {
		pipelines = map[string]any{}
		service["pipelines"] = pipelines
	}
	dir := t.TempDir()
	define := func(sec, id string) {
		s := section(sec)
		if _, ok := s[id]; ok {
			return
		}
		src, ok := standIns[componentType(id)]
		if !ok {
			t.Fatalf("the fragment uses %s %q without defining it, and the test has no stand-in for that type: define it in the block", sec, id)
		}
		var v any
		if err := yaml.Unmarshal([]byte(strings.ReplaceAll(src, "DIR", dir)), &v); err != nil {
			t.Fatal(err)
		}
		s[id] = v
	}
	used := map[string]bool{} // "receivers/otlp"
	for _, p := range pipelines {
		pm, _ := p.(map[string]any)
		for _, sec := range []string{"receivers", "processors", "exporters"} {
			ids, _ := pm[sec].([]any)
			for _, id := range ids {
				define(sec, fmt.Sprint(id))
				used[sec+"/"+fmt.Sprint(id)] = true
			}
		}
	}
	if exts, ok := service["extensions"].([]any); ok {
		for _, id := range exts {
			define("extensions", fmt.Sprint(id))
		}
	} else {
		var all []any
		for _, id := range slices.Sorted(mapKeys(section("extensions"))) {
			all = append(all, id)
		}
		service["extensions"] = all
	}
	for _, signal := range signals {
		added := map[string][]any{}
		for _, sec := range []string{"receivers", "processors", "exporters"} {
			for _, id := range slices.Sorted(mapKeys(section(sec))) {
				if !used[sec+"/"+id] && support[sec+"/"+componentType(id)][signal] {
					added[sec] = append(added[sec], id)
				}
			}
		}
		if len(added) == 0 {
			continue
		}
		if len(added["receivers"]) == 0 {
			define("receivers", "otlp")
			added["receivers"] = []any{"otlp"}
		}
		if len(added["exporters"]) == 0 {
			define("exporters", "debug")
			added["exporters"] = []any{"debug"}
		}
		pipelines[signal+"/docs"] = map[string]any{"receivers": added["receivers"], "processors": added["processors"], "exporters": added["exporters"]}
	}
	if len(pipelines) == 0 { // extensions only: the Collector needs a pipeline
		define("receivers", "otlp")
		define("exporters", "debug")
		pipelines["traces/docs"] = map[string]any{"receivers": []any{"otlp"}, "exporters": []any{"debug"}}
	}
	for _, sec := range sections {
		if m, ok := cfg[sec].(map[string]any); ok && len(m) == 0 {
			delete(cfg, sec)
		}
	}
	return cfg
}

// signalsOf caches componentSignals per distribution.
var signalsOf = map[string]map[string]map[string]bool{}

// componentSignals reads `DIST components`: per "receivers/otlp", the
// signals the component supports.
func componentSignals(t *testing.T, dist string) map[string]map[string]bool {
	t.Helper()
	if s, ok := signalsOf[dist]; ok {
		return s
	}
	out, err := exec.Command(dist, "components").Output()
	if err != nil {
		t.Fatalf("%s components: %v", dist, err)
	}
	type component struct {
		Name      string
		Stability map[string]string
	}
	var listed struct{ Receivers, Processors, Exporters []component }
	if err := yaml.Unmarshal(out, &listed); err != nil {
		t.Fatalf("%s components: %v\n%s", dist, err, out)
	}
	support := map[string]map[string]bool{}
	for sec, comps := range map[string][]component{"receivers": listed.Receivers, "processors": listed.Processors, "exporters": listed.Exporters} {
		for _, c := range comps {
			s := map[string]bool{}
			for signal, stability := range c.Stability {
				if stability != "" && stability != "Undefined" {
					s[strings.ToLower(signal)] = true
				}
			}
			support[sec+"/"+c.Name] = s
		}
	}
	if len(support["receivers/mcpdrift"]) == 0 {
		t.Fatalf("%s components lists no signal of the mcpdrift receiver:\n%s", dist, out)
	}
	signalsOf[dist] = support
	return support
}

func parseBlock(t *testing.T, b block) map[string]any {
	t.Helper()
	var frag map[string]any
	if err := yaml.Unmarshal([]byte(b.body), &frag); err != nil {
		t.Fatalf("%s: %v", b.where(), err)
	}
	return frag
}

// envRef is a configuration's reference to an environment variable.
var envRef = regexp.MustCompile(`\$\{env:(\w+)\}`)

func validateCompleted(t *testing.T, b block, frag map[string]any) {
	t.Helper()
	// The variables the reader sets: a secret, a token.
	for _, m := range envRef.FindAllStringSubmatch(b.body, -1) {
		t.Setenv(m[1], "docs-"+strings.ToLower(m[1]))
	}
	dist := distribution(t)
	cfg, err := yaml.Marshal(completeFragment(t, dist, frag))
	if err != nil {
		t.Fatal(err)
	}
	validate(t, dist, "fragment.yaml", cfg)
}

func checkCollectorFragment(t *testing.T, b block) {
	validateCompleted(t, b, parseBlock(t, b))
}

func checkPolicyFragment(t *testing.T, b block) {
	var target any
	if err := yaml.Unmarshal([]byte(standIns["mcpdrift"]), &target); err != nil {
		t.Fatal(err)
	}
	receiver := target.(map[string]any)
	receiver["policy"] = parseBlock(t, b)
	validateCompleted(t, b, map[string]any{"receivers": map[string]any{"mcpdrift": receiver}})
}

// checkReceiverCreatorFragment validates each receiver the block templates
// as receiver_creator would start it for an endpoint it observed (it sets
// endpoint to the observed host:port).
func checkReceiverCreatorFragment(t *testing.T, b block) {
	frag := parseBlock(t, b)
	templates, _ := dig(t, frag, "receivers", "receiver_creator", "receivers").(map[string]any)
	receivers := map[string]any{}
	for id, tmpl := range templates {
		config, _ := dig(t, tmpl, "config").(map[string]any)
		started := map[string]any{"endpoint": "127.0.0.1:3001"}
		for k, v := range config {
			started[k] = v
		}
		receivers[id] = started
	}
	if len(receivers) == 0 {
		t.Fatal("receiver_creator templates no receiver")
	}
	frag["receivers"] = receivers
	delete(frag, "service")
	exts := frag["extensions"].(map[string]any)
	for id := range exts {
		if _, ok := standIns[componentType(id)]; !ok {
			delete(exts, id) // the observers, not in otelcol-mcpdrift
		}
	}
	validateCompleted(t, b, frag)
}

// checkOCBFragment checks that every component the block adds to a
// manifest is one builder-config.yaml builds, from the same module, so that
// the docs' lines build what the validated distribution is.
func checkOCBFragment(t *testing.T, b block) {
	type entry struct{ GoMod, Import, Name string }
	read := func(src []byte) map[string][]entry {
		var m map[string]any
		if err := yaml.Unmarshal(src, &m); err != nil {
			t.Fatal(err)
		}
		out := map[string][]entry{}
		for _, sec := range sections {
			list, _ := m[sec].([]any)
			for _, e := range list {
				em, _ := e.(map[string]any)
				gomod, _ := em["gomod"].(string)
				imp, _ := em["import"].(string)
				name, _ := em["name"].(string)
				out[sec] = append(out[sec], entry{gomod, imp, name})
			}
		}
		return out
	}
	manifest, err := os.ReadFile(filepath.Join(root, "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	built := read(manifest)
	shown := read([]byte(b.body))
	n := 0
	for sec, entries := range shown {
		for _, e := range entries {
			n++
			module, _, _ := strings.Cut(e.GoMod, " ")
			ok := slices.ContainsFunc(built[sec], func(w entry) bool {
				wmod, _, _ := strings.Cut(w.GoMod, " ")
				return wmod == module && (w.Import == e.Import || e.Import == "" && w.Import == "")
			})
			if !ok {
				t.Errorf("%s: %s entry %q (import %q) is not a component builder-config.yaml builds", b.where(), sec, e.GoMod, e.Import)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no ocb entries", b.where())
	}
}

// checkActionFragment checks that each step using this repository's action
// passes only inputs action.yml declares.
func checkActionFragment(t *testing.T, b block) {
	src, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct{ Inputs map[string]any }
	if err := yaml.Unmarshal(src, &action); err != nil {
		t.Fatal(err)
	}
	var steps []struct {
		Uses string
		With map[string]any
	}
	if err := yaml.Unmarshal([]byte(b.body), &steps); err != nil {
		t.Fatalf("%s: %v", b.where(), err)
	}
	n := 0
	for _, s := range steps {
		if !strings.HasPrefix(s.Uses, "mcpdrift/mcpdrift@") {
			continue
		}
		n++
		for input := range s.With {
			if _, ok := action.Inputs[input]; !ok {
				t.Errorf("%s: input %q is not one of action.yml's", b.where(), input)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no step uses mcpdrift/mcpdrift", b.where())
	}
}
