package contract

import (
	"bytes"
	"encoding/json"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"slices"
	"strings"
)

// Change is one classified difference between two contracts.
type Change struct {
	// Rule is the stable rule ID (docs/rules.md).
	Rule RuleID `json:"rule"`
	// Severity is the rule's severity under the policy the diff ran with.
	Severity Severity `json:"severity"`
	// Subject is tool, prompt, resource, resource_template or server.
	Subject Kind `json:"subject"`
	// Name is the tool or prompt name, resource URI or URI template; empty
	// for server-level changes.
	Name string `json:"name"`
	// Path is a JSON pointer into the definition (for schemas: the schema
	// as if every local $ref were inlined); "" is the whole definition.
	Path string `json:"path"`
	// Before and After are the specific values that changed, as JSON; nil
	// when absent on that side.
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
	// Message is one sentence on the consequence. Server-controlled text in
	// it is already escaped with SanitizeText.
	Message string `json:"message"`
	// Witness, when set, is a value that shows the change by example
	// (package contract/witness); nil when none was asked for.
	Witness *Witness `json:"witness,omitempty"`

	// brief is the fragment for the one-line description.
	brief string
}

// Report is the classified difference between two contracts.
type Report struct {
	// Changes, worst first (then by subject, name, path and rule).
	Changes []Change
}

// Summary counts changes per severity.
type Summary struct {
	Breaking   int `json:"breaking"`
	Warning    int `json:"warning"`
	Compatible int `json:"compatible"`
	Info       int `json:"info"`
}

// Count returns the count for one severity.
func (s Summary) Count(sev Severity) int {
	switch sev {
	case Breaking:
		return s.Breaking
	case Warning:
		return s.Warning
	case Compatible:
		return s.Compatible
	case Info:
		return s.Info
	}
	return 0
}

// Total is the number of changes.
func (s Summary) Total() int { return s.Breaking + s.Warning + s.Compatible + s.Info }

// Worst returns the worst severity in the report, None when it is empty.
func (r *Report) Worst() Severity {
	worst := None
	if r == nil {
		return worst
	}
	for _, c := range r.Changes {
		worst = max(worst, c.Severity)
	}
	return worst
}

// Summary counts the report's changes per severity.
func (r *Report) Summary() Summary {
	var s Summary
	if r == nil {
		return s
	}
	for _, c := range r.Changes {
		switch c.Severity {
		case Breaking:
			s.Breaking++
		case Warning:
			s.Warning++
		case Compatible:
			s.Compatible++
		case Info:
			s.Info++
		}
	}
	return s
}

// Empty reports whether there is no change.
func (r *Report) Empty() bool { return r == nil || len(r.Changes) == 0 }

// reportJSON is the documented JSON shape of a report (docs/diff.md).
type reportJSON struct {
	Severity Severity `json:"severity"`
	Summary  Summary  `json:"summary"`
	Changes  []Change `json:"changes"`
}

// MarshalJSON writes {"severity", "summary", "changes"}; absent before or
// after values are written as null.
func (r *Report) MarshalJSON() ([]byte, error) {
	out := reportJSON{Severity: r.Worst(), Summary: r.Summary()}
	if r != nil {
		out.Changes = r.Changes
	}
	if out.Changes == nil {
		out.Changes = []Change{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// UnmarshalJSON reads what MarshalJSON writes (severity and summary are
// derived, so they are not read back).
func (r *Report) UnmarshalJSON(b []byte) error {
	var in reportJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	r.Changes = in.Changes
	return nil
}

// subjectOrder orders subjects in reports: tools first, the server last.
func subjectOrder(s Kind) int {
	switch s {
	case KindTool:
		return 0
	case KindPrompt:
		return 1
	case KindResourceTemplate:
		return 2
	case KindResource:
		return 3
	}
	return 4
}

// sortChanges orders changes worst first, then by subject, name, path, rule.
func sortChanges(cs []Change) {
	slices.SortStableFunc(cs, func(a, b Change) int {
		if a.Severity != b.Severity {
			return int(b.Severity) - int(a.Severity)
		}
		if ra, rb := subjectOrder(a.Subject), subjectOrder(b.Subject); ra != rb {
			return ra - rb
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(string(a.Rule), string(b.Rule))
	})
}

// changeJSON is Change as JSON, with the name as a raw JSON string so that a
// name holding an unpaired surrogate keeps its escape (see key.go).
type changeJSON struct {
	Rule     RuleID          `json:"rule"`
	Severity Severity        `json:"severity"`
	Subject  Kind            `json:"subject"`
	Name     json.RawMessage `json:"name"`
	Path     string          `json:"path"`
	Before   json.RawMessage `json:"before"`
	After    json.RawMessage `json:"after"`
	Message  string          `json:"message"`
	Witness  *Witness        `json:"witness,omitempty"`
}

// MarshalJSON writes the change with its name exact.
func (c Change) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(changeJSON{Rule: c.Rule, Severity: c.Severity, Subject: c.Subject, Name: canon.AppendJSONKey(nil, c.Name),
		Path: c.Path, Before: c.Before, After: c.After, Message: c.Message, Witness: c.Witness})
	return bytes.TrimRight(b.Bytes(), "\n"), err
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Change) UnmarshalJSON(b []byte) error {
	var in changeJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	name, err := optionalKey(in.Name, "change name")
	*c = Change{Rule: in.Rule, Severity: in.Severity, Subject: in.Subject, Name: name, Path: in.Path, Before: in.Before, After: in.After, Message: in.Message, Witness: in.Witness}
	return err
}
