package contract

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gobwas/glob"
)

// Named base policies.
const (
	PolicyDefault = "default"
	// PolicyStrict turns every warning into breaking.
	PolicyStrict = "strict"
	// PolicyLenient is for teams whose LLM callers tolerate a rejected
	// extra argument (they read the error and retry): removing a property
	// from a closed model is a warning, closing a model is info.
	PolicyLenient = "lenient"
)

// PolicyNames lists the named base policies.
func PolicyNames() []string { return []string{PolicyDefault, PolicyStrict, PolicyLenient} }

// lenientOverrides are the lenient policy's changes to the default.
func lenientOverrides() map[RuleID]Severity {
	return map[RuleID]Severity{
		"input.property.removed_closed":      Warning,
		"input.additional_properties.closed": Info,
	}
}

// PolicyConfig is the one documented policy shape (docs/diff.md). The CLI
// reads it from YAML or JSON with --config; the Collector receiver reads it
// under its policy: key.
type PolicyConfig struct {
	// Base is the named policy to start from: default (when empty), strict
	// or lenient.
	Base string `mapstructure:"base" yaml:"base,omitempty" json:"base,omitempty"`
	// Severities overrides the severity of rules: the key is a rule ID or a
	// glob over rule IDs (input.description.*), the value breaking,
	// warning, compatible, info or none (none drops the change). An exact ID
	// wins over globs; among globs the longest pattern wins.
	Severities map[string]Severity `mapstructure:"severities" yaml:"severities,omitempty" json:"severities,omitempty"`
	// Ignore drops changes that match every field set in one entry.
	Ignore []IgnoreRule `mapstructure:"ignore" yaml:"ignore,omitempty" json:"ignore,omitempty"`
}

// IgnoreRule matches changes to drop. Empty fields match anything; at
// least one field must be set.
type IgnoreRule struct {
	// Rule is a rule ID or a glob over rule IDs.
	Rule string `mapstructure:"rule" yaml:"rule,omitempty" json:"rule,omitempty"`
	// Subject is tool, prompt, resource, resource_template or server.
	Subject Kind `mapstructure:"subject" yaml:"subject,omitempty" json:"subject,omitempty"`
	// Name is a glob over subject names (tool names, resource URIs).
	Name string `mapstructure:"name" yaml:"name,omitempty" json:"name,omitempty"`
	// Path is a glob over JSON pointers: * matches within one segment,
	// ** across segments (/inputSchema/**/description).
	Path string `mapstructure:"path" yaml:"path,omitempty" json:"path,omitempty"`
}

// Validate reports an unknown base policy, an override of an unknown rule,
// an invalid glob, an unknown subject, or an ignore rule that would match
// everything.
func (c PolicyConfig) Validate() error {
	_, err := NewPolicy(c)
	return err
}

// Policy decides each change's severity and whether it is ignored. Build one
// with NewPolicy, NamedPolicy or DefaultPolicy; a Policy is immutable and
// safe for concurrent use.
type Policy struct {
	name     string
	severity map[RuleID]Severity
	ignores  []ignoreMatcher
}

type ignoreMatcher struct {
	rule, name, path glob.Glob
	subject          Kind
}

// DefaultPolicy is the default classification of docs/rules.md.
func DefaultPolicy() *Policy {
	p, _ := NamedPolicy(PolicyDefault)
	return p
}

// NamedPolicy returns a named base policy.
func NamedPolicy(name string) (*Policy, error) {
	return NewPolicy(PolicyConfig{Base: name})
}

// NewPolicy compiles a policy configuration.
func NewPolicy(c PolicyConfig) (*Policy, error) {
	base := c.Base
	if base == "" {
		base = PolicyDefault
	}
	p := &Policy{name: base, severity: map[RuleID]Severity{}}
	table := ruleTable().list
	for _, r := range table {
		p.severity[r.ID] = r.Severity
		if base == PolicyStrict && r.Severity == Warning {
			p.severity[r.ID] = Breaking
		}
	}
	switch base {
	case PolicyDefault, PolicyStrict:
	case PolicyLenient:
		for id, s := range lenientOverrides() {
			p.severity[id] = s
		}
	default:
		return nil, fmt.Errorf("unknown base policy %q (want one of %s)", c.Base, strings.Join(PolicyNames(), ", "))
	}
	var errs []error
	if err := p.applyOverrides(c.Severities, table); err != nil {
		errs = append(errs, err)
	}
	for i, ig := range c.Ignore {
		m, err := compileIgnore(ig)
		if err != nil {
			errs = append(errs, fmt.Errorf("ignore[%d]: %w", i, err))
			continue
		}
		p.ignores = append(p.ignores, m)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(c.Severities) > 0 || len(c.Ignore) > 0 {
		p.name += "+custom"
	}
	return p, nil
}

// applyOverrides sets severities from rule IDs and globs: globs first,
// shorter (less specific) before longer, then exact IDs.
func (p *Policy) applyOverrides(overrides map[string]Severity, table []Rule) error {
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	isExact := func(k string) bool { _, ok := p.severity[RuleID(k)]; return ok }
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if isExact(a) != isExact(b) {
			return !isExact(a)
		}
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
	var errs []error
	for _, k := range keys {
		sev := overrides[k]
		if sev < None || sev > Breaking {
			errs = append(errs, fmt.Errorf("severities[%q]: invalid severity", k))
			continue
		}
		if isExact(k) {
			p.severity[RuleID(k)] = sev
			continue
		}
		g, err := glob.Compile(k)
		if err != nil {
			errs = append(errs, fmt.Errorf("severities[%q]: %w", k, err))
			continue
		}
		matched := false
		for _, r := range table {
			if g.Match(string(r.ID)) {
				p.severity[r.ID] = sev
				matched = true
			}
		}
		if !matched {
			errs = append(errs, fmt.Errorf("severities[%q]: no such rule (see docs/rules.md)%s", k, suggestRule(k, table)))
		}
	}
	return errors.Join(errs...)
}

// suggestRule names the rule with the longest common prefix with k.
func suggestRule(k string, table []Rule) string {
	best, bestLen := "", 0
	for _, r := range table {
		n := 0
		for n < len(k) && n < len(r.ID) && k[n] == r.ID[n] {
			n++
		}
		if n > bestLen {
			best, bestLen = string(r.ID), n
		}
	}
	if bestLen < 3 {
		return ""
	}
	return "; did you mean " + best + "?"
}

func compileIgnore(ig IgnoreRule) (ignoreMatcher, error) {
	var m ignoreMatcher
	if ig == (IgnoreRule{}) {
		return m, errors.New("sets none of rule, subject, name, path (it would ignore everything)")
	}
	if ig.Subject != "" && !slices.Contains(append(slices.Clone(Kinds), KindServer), ig.Subject) {
		return m, fmt.Errorf("subject %q is not tool, prompt, resource, resource_template or server", ig.Subject)
	}
	m.subject = ig.Subject
	var err error
	compile := func(pattern string, seps ...rune) glob.Glob {
		if pattern == "" || err != nil {
			return nil
		}
		var g glob.Glob
		g, err = glob.Compile(pattern, seps...)
		return g
	}
	m.rule = compile(ig.Rule)
	m.name = compile(ig.Name)
	m.path = compile(ig.Path, '/')
	if err != nil {
		return m, err
	}
	if m.rule != nil && !slices.ContainsFunc(ruleTable().list, func(r Rule) bool { return m.rule.Match(string(r.ID)) }) {
		return m, fmt.Errorf("rule %q matches no rule (see docs/rules.md)%s", ig.Rule, suggestRule(ig.Rule, ruleTable().list))
	}
	return m, nil
}

func (m ignoreMatcher) match(c Change) bool {
	return (m.rule == nil || m.rule.Match(string(c.Rule))) &&
		(m.subject == "" || m.subject == c.Subject) &&
		(m.name == nil || m.name.Match(c.Name)) &&
		(m.path == nil || m.path.Match(c.Path))
}

// Name is the base policy's name, with "+custom" when it has overrides or
// ignore rules.
func (p *Policy) Name() string { return p.name }

// Severity returns the severity of a rule under this policy; ok is false for
// an unknown rule.
func (p *Policy) Severity(rule RuleID) (Severity, bool) {
	s, ok := p.severity[rule]
	return s, ok
}

// Ignores reports whether an ignore rule matches the change.
func (p *Policy) Ignores(c Change) bool {
	return slices.ContainsFunc(p.ignores, func(m ignoreMatcher) bool { return m.match(c) })
}

// Apply re-classifies changes under this policy (severities from the
// policy, ignored and none-severity changes dropped) and returns them as a
// sorted report.
func (p *Policy) Apply(changes []Change) *Report {
	out := make([]Change, 0, len(changes))
	for _, c := range changes {
		if s, ok := p.severity[c.Rule]; ok {
			c.Severity = s
		}
		if c.Severity == None || p.Ignores(c) {
			continue
		}
		out = append(out, c)
	}
	sortChanges(out)
	return &Report{Changes: out}
}
