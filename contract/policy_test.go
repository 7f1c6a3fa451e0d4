package contract

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// driftPair has one change of each interesting kind.
func driftPair(t *testing.T) (*Snapshot, *Snapshot) {
	old := snapshotOf(t, snapSpec{tools: []string{
		`{"name":"search","description":"Search. token=abc1","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"debug":{"type":"boolean"}},"additionalProperties":false}}`,
		`{"name":"gone"}`,
	}})
	new := snapshotOf(t, snapSpec{tools: []string{
		`{"name":"search","description":"Search. token=zzz9","inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"query"}},"additionalProperties":false}}`,
	}})
	return old, new
}

func TestNamedPolicies(t *testing.T) {
	old, new := driftPair(t)
	sev := func(p *Policy, rule RuleID) Severity {
		c, ok := findChange(record(t, Diff(old, new, p)), rule)
		if !ok {
			t.Fatalf("%s missing", rule)
		}
		return c.Severity
	}
	strict, _ := NamedPolicy(PolicyStrict)
	lenient, _ := NamedPolicy(PolicyLenient)
	checks := []struct {
		p    *Policy
		rule RuleID
		want Severity
	}{
		{nil, "tool.description.changed", Warning},
		{strict, "tool.description.changed", Breaking},
		{strict, "input.description.changed", Breaking},
		{strict, "tool.removed", Breaking},
		{nil, "input.property.removed_closed", Breaking},
		{lenient, "input.property.removed_closed", Warning},
		{lenient, "tool.removed", Breaking},
	}
	for _, c := range checks {
		if got := sev(c.p, c.rule); got != c.want {
			t.Errorf("%v %s: %v, want %v", c.p, c.rule, got, c.want)
		}
	}
	for _, r := range Rules() {
		s, _ := strict.Severity(r.ID)
		if r.Severity == Warning && s != Breaking || r.Severity != Warning && s != r.Severity {
			t.Errorf("strict %s: %v (default %v)", r.ID, s, r.Severity)
		}
	}
	if _, err := NamedPolicy("paranoid"); err == nil {
		t.Error("unknown base accepted")
	}
}

func TestPolicyOverridesAndIgnores(t *testing.T) {
	old, new := driftPair(t)
	cfg := PolicyConfig{
		Severities: map[string]Severity{
			"input.*":                       Info,
			"input.property.removed_closed": Warning, // exact beats glob
			"tool.removed":                  None,    // none drops it
		},
		Ignore: []IgnoreRule{{Subject: KindTool, Name: "sea*", Path: "/description"}},
	}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := record(t, Diff(old, new, p))
	got := map[string]Severity{}
	for _, c := range r.Changes {
		got[string(c.Rule)] = c.Severity
	}
	want := map[string]Severity{"input.property.removed_closed": Warning, "input.description.changed": Info}
	if len(got) != len(want) || got["input.property.removed_closed"] != Warning || got["input.description.changed"] != Info {
		t.Errorf("got %v, want %v", got, want)
	}
	if p.Name() != "default+custom" {
		t.Errorf("name %q", p.Name())
	}
	// ** crosses segments, * does not.
	for _, c := range []struct {
		path string
		n    int
	}{{"/inputSchema/**/description", 1}, {"/inputSchema/*/description", 0}, {"/inputSchema/properties/*/description", 1}} {
		p, err := NewPolicy(PolicyConfig{Ignore: []IgnoreRule{{Path: c.path, Rule: "input.description.*"}}})
		if err != nil {
			t.Fatal(err)
		}
		r := Diff(old, new, p)
		n := len(Diff(old, new, nil).Changes) - len(r.Changes)
		if n != c.n {
			t.Errorf("path %s ignored %d changes, want %d", c.path, n, c.n)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	bad := []struct {
		cfg  PolicyConfig
		want string
	}{
		{PolicyConfig{Base: "paranoid"}, "unknown base"},
		{PolicyConfig{Severities: map[string]Severity{"tool.remove": Info}}, "did you mean tool."},
		{PolicyConfig{Severities: map[string]Severity{"nothing.*": Info}}, "no such rule"},
		{PolicyConfig{Severities: map[string]Severity{"input.type.changed": Severity(9)}}, "invalid severity"},
		{PolicyConfig{Ignore: []IgnoreRule{{}}}, "ignore everything"},
		{PolicyConfig{Ignore: []IgnoreRule{{Subject: "tools"}}}, "subject"},
		{PolicyConfig{Ignore: []IgnoreRule{{Path: "/a/[b"}}}, "ignore[0]"},
		{PolicyConfig{Ignore: []IgnoreRule{{Rule: "tool.nope"}}}, "matches no rule"},
	}
	for _, b := range bad {
		err := b.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want %q", b.cfg, err, b.want)
		}
	}
	if err := (PolicyConfig{}).Validate(); err != nil {
		t.Errorf("empty config: %v", err)
	}
}

func TestPolicyConfigJSON(t *testing.T) {
	var cfg PolicyConfig
	err := json.Unmarshal([]byte(`{"base":"strict","severities":{"tool.title.changed":"none","input.format.*":"BREAKING"},"ignore":[{"name":"rotating_*","path":"/description"}]}`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Base != PolicyStrict || cfg.Severities["input.format.*"] != Breaking || cfg.Severities["tool.title.changed"] != None || cfg.Ignore[0].Name != "rotating_*" {
		t.Errorf("%+v", cfg)
	}
	if err := json.Unmarshal([]byte(`{"severities":{"x":"fatal"}}`), &cfg); err == nil {
		t.Error("bad severity name accepted")
	}
}

func TestSeverity(t *testing.T) {
	for _, s := range []Severity{None, Info, Compatible, Warning, Breaking} {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Severity
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("%v round trip: %v %v", s, back, err)
		}
	}
	if !(None < Info && Info < Compatible && Compatible < Warning && Warning < Breaking) {
		t.Error("order")
	}
	if _, err := Severity(7).MarshalText(); err == nil {
		t.Error("invalid severity marshalled")
	}
	if _, err := ParseSeverity("fatal"); err == nil {
		t.Error("fatal parsed")
	}
	if !slices.Equal(PolicyNames(), []string{"default", "strict", "lenient"}) {
		t.Error(PolicyNames())
	}
}
