package contract

import (
	"slices"
	"strings"
	"testing"
)

var fixtureVersions = []string{"2025.7.1", "2025.9.25", "2025.11.25", "2026.1.26"}

// byRule groups "name" (or "name→new" for renames) per rule.
func byRule(r *Report) map[string][]string {
	m := map[string][]string{}
	for _, c := range r.Changes {
		n := c.Name
		if c.Rule == "tool.renamed" {
			n += "→" + jsonText(c.After)
		}
		if c.Subject == KindServer {
			n = c.Path
		}
		m[string(c.Rule)] = append(m[string(c.Rule)], n)
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m
}

func TestFixtures2025_7_1To2025_9_25(t *testing.T) {
	r := record(t, Diff(fixtureSnapshot(t, "2025.7.1"), fixtureSnapshot(t, "2025.9.25"), nil))
	got := byRule(r)
	want := map[string][]string{
		"tool.added":                  {"getResourceLinks", "listRoots", "startElicitation", "structuredContent"},
		"server.instructions.changed": {"/instructions"},
		"server.info.changed":         {"/server_info/title"},
	}
	assertRules(t, got, want)
	if r.Worst() != Warning {
		t.Errorf("worst %v", r.Worst())
	}
	if got := r.OneLine(); got != "instructions changed; added 4 tools (getResourceLinks, listRoots, startElicitation, structuredContent); +1 info" {
		t.Errorf("one line %q", got)
	}
}

func TestFixtures2025_9_25To2025_11_25(t *testing.T) {
	r := record(t, Diff(fixtureSnapshot(t, "2025.9.25"), fixtureSnapshot(t, "2025.11.25"), nil))
	assertRules(t, byRule(r), map[string][]string{
		"tool.added":               {"zip"},
		"tool.description.changed": {"startElicitation"},
	})
	c, _ := findChange(r, "tool.description.changed")
	if !strings.Contains(string(c.Before), "favorite color") || !strings.Contains(string(c.After), "various field types") {
		t.Errorf("rewritten description before/after: %s → %s", c.Before, c.After)
	}
	if got := r.OneLine(); got != "startElicitation: description changed; added 1 tool (zip)" {
		t.Errorf("one line %q", got)
	}
}

// The 2026 release renamed the tool set wholesale (camelCase to kebab-case,
// some to new verbs), removed two tools, added five and added titles,
// execution and listChanged capabilities.
func TestFixtures2025_11_25To2026_1_26(t *testing.T) {
	r := record(t, Diff(fixtureSnapshot(t, "2025.11.25"), fixtureSnapshot(t, "2026.1.26"), nil))
	got := byRule(r)
	assertRules(t, got, map[string][]string{
		"tool.renamed": {
			"add→get-sum", "annotatedMessage→get-annotated-message", "getResourceLinks→get-resource-links",
			"getResourceReference→get-resource-reference", "getTinyImage→get-tiny-image", "listRoots→get-roots-list",
			"longRunningOperation→trigger-long-running-operation", "printEnv→get-env", "sampleLLM→trigger-sampling-request",
			"structuredContent→get-structured-content",
		},
		"tool.removed": {"startElicitation", "zip"},
		"tool.added":   {"gzip-file-as-resource", "simulate-research-query", "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-elicitation-request"},
		"tool.description.changed": {"echo", "get-annotated-message", "get-env", "get-resource-links", "get-sum", "get-tiny-image",
			"trigger-long-running-operation", "trigger-sampling-request"},
		"tool.title.changed": {"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
			"get-roots-list", "get-structured-content", "get-sum", "get-tiny-image", "trigger-long-running-operation", "trigger-sampling-request"},
		// execution.taskSupport "forbidden" made explicit is no semantic change
		"tool.definition.reformatted":        nil,
		"input.enum.added":                   {"get-structured-content"},
		"input.limit.removed":                {"get-resource-reference", "get-resource-reference", "get-structured-content"},
		"input.description.changed":          {"get-resource-reference", "get-structured-content"},
		"input.default.changed":              {"get-resource-reference"},
		"input.property.added":               {"get-resource-reference"},
		"input.required.removed":             {"get-resource-reference"},
		"input.additional_properties.opened": {"get-env", "get-roots-list", "get-tiny-image"},
		"capability.added":                   {"/capabilities/prompts/listChanged", "/capabilities/resources/listChanged", "/capabilities/tasks", "/capabilities/tools/listChanged"},
		"server.instructions.changed":        {"/instructions"},
		"server.version.changed":             {"/server_info/version"},
		"server.info.changed":                {"/server_info/name", "/server_info/title"},
	})
	if r.Worst() != Breaking {
		t.Errorf("worst %v", r.Worst())
	}
	line := r.OneLine()
	for _, prefix := range []string{"removed 2 tools (startElicitation, zip); renamed 10 tools (add→get-sum, ", "get-structured-content: location restricted to"} {
		if !strings.Contains(line, prefix) {
			t.Errorf("one line %q lacks %q", line, prefix)
		}
	}
	if strings.Index(line, "server version") > strings.Index(line, "description changed") || strings.Index(line, "description changed") > strings.Index(line, "added 5 tools") {
		t.Errorf("one line not worst first: %q", line)
	}
}

func TestFixturesSelfDiffEmpty(t *testing.T) {
	for _, v := range fixtureVersions {
		s := fixtureSnapshot(t, v)
		if r := Diff(s, fixtureSnapshot(t, v), nil); !r.Empty() {
			t.Errorf("%s: %v", v, rulesAt(r))
		}
	}
}

// Snapshots written and read back (as the receiver stores baselines) diff
// the same as the snapshots themselves.
func TestFixturesThroughEncoding(t *testing.T) {
	roundTrip := func(s *Snapshot) *Snapshot {
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeSnapshot(b)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	old, new := fixtureSnapshot(t, "2025.11.25"), fixtureSnapshot(t, "2026.1.26")
	want := rulesAt(Diff(old, new, nil))
	if got := rulesAt(Diff(roundTrip(old), roundTrip(new), nil)); !slices.Equal(got, want) {
		t.Errorf("after encoding: %v\nwant %v", got, want)
	}
}

func assertRules(t *testing.T, got, want map[string][]string) {
	t.Helper()
	for rule, names := range want {
		if names == nil {
			if len(got[rule]) > 0 {
				t.Errorf("%s: unexpected %v", rule, got[rule])
			}
			continue
		}
		if !slices.Equal(got[rule], names) {
			t.Errorf("%s:\n got  %v\n want %v", rule, got[rule], names)
		}
	}
	for rule, names := range got {
		if _, ok := want[rule]; !ok {
			t.Errorf("unexpected %s: %v", rule, names)
		}
	}
}
