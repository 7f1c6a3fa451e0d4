package contract

// TEMPORARY shim of the issue-3 API so the receiver compiles before the
// classifier lands. Never merged.

import (
	"encoding/json"
	"fmt"
	"strings"
)

type Severity int

const (
	None Severity = iota
	Info
	Compatible
	Warning
	Breaking
)

func (s Severity) String() string {
	return [...]string{"none", "info", "compatible", "warning", "breaking"}[s]
}

type Change struct {
	Rule     string          `json:"rule"`
	Severity Severity        `json:"severity"`
	Subject  string          `json:"subject"`
	Name     string          `json:"name"`
	Path     string          `json:"path"`
	Before   json.RawMessage `json:"before,omitempty"`
	After    json.RawMessage `json:"after,omitempty"`
	Message  string          `json:"message"`
}

type Report struct{ Changes []Change }

func (r *Report) Worst() Severity {
	w := None
	for _, c := range r.Changes {
		w = max(w, c.Severity)
	}
	return w
}

type Summary struct{ counts map[Severity]int }

func (s Summary) Count(sev Severity) int { return s.counts[sev] }

func (r *Report) Summary() Summary {
	m := map[Severity]int{}
	for _, c := range r.Changes {
		m[c.Severity]++
	}
	return Summary{m}
}

func (r *Report) OneLine() string {
	var parts []string
	for _, c := range r.Changes {
		parts = append(parts, c.Name+": "+c.Rule)
	}
	return strings.Join(parts, "; ")
}

type PolicyConfig struct {
	Base   string   `mapstructure:"base"`
	Ignore []string `mapstructure:"ignore"`
}

func (p *PolicyConfig) Validate() error { return nil }

type Policy struct{ cfg PolicyConfig }

func NewPolicy(cfg PolicyConfig) (*Policy, error) { return &Policy{cfg}, nil }

// Diff: shim compares tool digests only.
func Diff(old, new *Snapshot, p *Policy) *Report {
	r := &Report{}
	if old == nil {
		return r
	}
	for _, d := range old.Tools {
		n, ok := new.Tools.Lookup(d.Key)
		switch {
		case !ok:
			r.Changes = append(r.Changes, Change{Rule: "tool-removed", Severity: Breaking, Subject: "tool", Name: d.Key, Message: fmt.Sprintf("tool %s removed", d.Key)})
		case n.Digest != d.Digest:
			r.Changes = append(r.Changes, Change{Rule: "tool-changed", Severity: Warning, Subject: "tool", Name: d.Key, Path: "/description", Before: desc(d.Raw), After: desc(n.Raw), Message: "changed"})
		}
	}
	for _, d := range new.Tools {
		if _, ok := old.Tools.Lookup(d.Key); !ok {
			r.Changes = append(r.Changes, Change{Rule: "tool-added", Severity: Compatible, Subject: "tool", Name: d.Key, Message: "added"})
		}
	}
	return r
}

func desc(raw json.RawMessage) json.RawMessage {
	var v struct{ Description json.RawMessage }
	_ = json.Unmarshal(raw, &v)
	return v.Description
}
