package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"path/filepath"

	"github.com/mcpdrift/mcpdrift/contract"
)

// SARIF 2.1.0 output (format sarif) for code scanning: one result per
// change, its rule from the rule table, its level from the severity, its
// location the definition in the compared file (see locator), and a
// fingerprint stable across runs so an alert follows the same change.

const (
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	projectURI   = "https://github.com/mcpdrift/mcpdrift"
	rulesDocURI  = projectURI + "/blob/main/docs/rules.md"
	sarifVersion = "2.1.0"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   contract.RuleID   `json:"id"`
	ShortDescription     sarifText         `json:"shortDescription"`
	HelpURI              string            `json:"helpUri"`
	DefaultConfiguration sarifRuleConfig   `json:"defaultConfiguration"`
	Properties           map[string]string `json:"properties,omitempty"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              contract.RuleID   `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          sarifProperties   `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifProperties carries the change as JSON reports it.
type sarifProperties struct {
	Severity contract.Severity `json:"severity"`
	Subject  contract.Kind     `json:"subject"`
	Name     string            `json:"name"`
	Path     string            `json:"path"`
	Before   json.RawMessage   `json:"before"`
	After    json.RawMessage   `json:"after"`
	Witness  *contract.Witness `json:"witness,omitempty"`
}

// levels maps severities to a SARIF level and a GitHub workflow command:
// breaking is an error, a warning a warning, compatible a note (notice),
// info none (recorded, never an alert; no annotation).
var levels = map[contract.Severity]struct{ sarif, github string }{
	contract.Breaking:   {"error", "error"},
	contract.Warning:    {"warning", "warning"},
	contract.Compatible: {"note", "notice"},
	contract.Info:       {"none", ""},
}

func sarifLevel(s contract.Severity) string {
	if l, ok := levels[s]; ok {
		return l.sarif
	}
	return "none"
}

func (f sarifFormat) Format(w io.Writer, r *contract.Report) error {
	loc := f.loc
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "mcpdrift", Version: f.version, InformationURI: projectURI, Rules: []sarifRule{}}}, Results: []sarifResult{}}
	ruleIndex := map[contract.RuleID]int{}
	for _, c := range r.Changes {
		i, ok := ruleIndex[c.Rule]
		if !ok {
			rule, _ := contract.LookupRule(c.Rule)
			i = len(run.Tool.Driver.Rules)
			ruleIndex[c.Rule] = i
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
				ID: c.Rule, ShortDescription: sarifText{Text: rule.When}, HelpURI: rulesDocURI,
				DefaultConfiguration: sarifRuleConfig{Level: sarifLevel(rule.Severity)},
				Properties:           ruleProperties(rule),
			})
		}
		res := sarifResult{
			RuleID: c.Rule, RuleIndex: i, Level: sarifLevel(c.Severity),
			Message:             sarifText{Text: changeSentence(c)},
			PartialFingerprints: map[string]string{"mcpdriftChange/v1": changeFingerprint(c)},
			Properties:          sarifProperties{Severity: c.Severity, Subject: c.Subject, Name: c.Name, Path: c.Path, Before: c.Before, After: c.After, Witness: c.Witness},
		}
		l := sarifLocation{LogicalLocations: []sarifLogical{{Name: c.Name, FullyQualifiedName: logicalName(c), Kind: "member"}}}
		if file, line := loc.Locate(c); file != "" {
			l.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{URI: filepath.ToSlash(file)}, Region: sarifRegion{StartLine: line}}
		}
		res.Locations = []sarifLocation{l}
		run.Results = append(run.Results, res)
	}
	return writeJSONLine(w, sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

func ruleProperties(r contract.Rule) map[string]string {
	p := map[string]string{"subject": string(r.Subject)}
	if r.Direction != "" {
		p["direction"] = string(r.Direction)
	}
	return p
}

// changeSentence is the change in one line of plain text: who, what, and
// the witness when there is one.
func changeSentence(c contract.Change) string {
	s := c.Message
	if c.Subject != contract.KindServer && c.Name != "" {
		s = string(c.Subject) + " " + contract.SanitizeText(c.Name) + ": " + s
	}
	if w := c.Witness; w.Found() {
		s += " Witness: " + w.ValueKind() + " " + string(w.Value()) + " (old: " + contract.SanitizeText(w.Old) + "; new: " + contract.SanitizeText(w.New) + ")."
	}
	return s
}

// logicalName names the changed part: tool/search/inputSchema/properties/q.
func logicalName(c contract.Change) string {
	if c.Subject == contract.KindServer {
		return "server" + c.Path
	}
	return string(c.Subject) + "/" + c.Name + c.Path
}

// changeFingerprint identifies a change across runs: rule, subject, name,
// path and values.
func changeFingerprint(c contract.Change) string {
	h := sha256.New()
	for _, part := range []string{string(c.Rule), string(c.Subject), c.Name, c.Path, string(c.Before), string(c.After)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// sarifFormat is SARIF naming the tool at version.
type sarifFormat struct {
	loc     Locator
	version string
}

func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
