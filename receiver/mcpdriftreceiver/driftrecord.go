package mcpdriftreceiver

import (
	"encoding/json"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

// driftRecord is one drift as a history keeps it: the entry in memory and,
// encoded, the element of the stored history (storedHistory, version 1).
// Its JSON is the receiver's storage format and is defined here, not by the
// API: what the control plane serves (apiwire.Drift, apiwire.DriftDetail)
// is a view made from a record (apiDrift, apiDetail, below), so
// renaming a member of the API's JSON leaves stored histories, and the
// history's byte count, as they are. Version 1 is what the receiver wrote
// when the history held the API's types; its members, their order and the
// encoding (encoding/json, HTML escaped) are kept byte for byte
// (TestStoredHistoryV1RoundTrip).
//
// The changes and the summary are stored in the classifier's own JSON (the
// change list `mcpdrift diff --format json` writes), which package contract
// keeps.
type driftRecord struct {
	ID      string    `json:"id"`
	DriftID string    `json:"drift_id"`
	Server  string    `json:"server"`
	At      time.Time `json:"at"`
	// ChangedAt is when the server was first seen serving the new contract
	// (At is when the drift was confirmed). Records stored before it was
	// kept have none, and are stored again without it: the API reads At.
	ChangedAt        time.Time         `json:"changed_at,omitzero"`
	PreviousContract string            `json:"previous_contract"`
	CurrentContract  string            `json:"current_contract"`
	PreviousServer   *serverRecord     `json:"previous_server"`
	CurrentServer    *serverRecord     `json:"current_server"`
	Severity         string            `json:"severity"`
	Summary          contract.Summary  `json:"summary"`
	Description      string            `json:"description"`
	Changes          []contract.Change `json:"changes"`
	State            driftState        `json:"state"`
	ClosedAt         *time.Time        `json:"closed_at"`
	Accepted         *acceptRecord     `json:"accepted"`
	// Truncated: definitions or before/after values were left out to keep
	// the record within max_drift_bytes (fitEntry).
	Truncated   bool               `json:"truncated"`
	Definitions []definitionRecord `json:"definitions"` // never null
	// NextStep is always null. Version 1 held the API's next_step member,
	// which a history never filled (the extension does, for an answer);
	// it stays so that version 1 is written as it always was.
	NextStep *struct{} `json:"next_step"`
}

// driftState is where a drift stands: open, accepted, reverted or
// superseded.
type driftState string

// The stored drift states.
const (
	driftOpen       driftState = "open"
	driftAccepted   driftState = "accepted"
	driftReverted   driftState = "reverted"
	driftSuperseded driftState = "superseded"
)

// serverRecord is the serverInfo a drift's contract carried.
type serverRecord struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// acceptRecord records who accepted a drift.
type acceptRecord struct {
	By            string    `json:"by"`
	At            time.Time `json:"at"`
	Authenticated bool      `json:"authenticated"`
	Comment       *string   `json:"comment"` // null when none was given
}

// definitionRecord is one changed item, whole, on both sides.
type definitionRecord struct {
	Subject      contract.Kind   `json:"subject"`
	Name         string          `json:"name"`
	Before       json.RawMessage `json:"before"`
	After        json.RawMessage `json:"after"`
	BeforeDigest string          `json:"before_digest"`
	AfterDigest  string          `json:"after_digest"`
	Truncated    bool            `json:"truncated"`
}

// encodedSize is the record's size as stored.
func (d *driftRecord) encodedSize() int {
	b, err := json.Marshal(d)
	if err != nil {
		return 0
	}
	return len(b)
}

// The API's view of a record. Every member is copied by name, so a drift
// the control plane serves and a record stored never share a type.

// apiStates maps the stored states to the API's.
var apiStates = map[driftState]string{
	driftOpen:       apiwire.DriftOpen,
	driftAccepted:   apiwire.DriftAccepted,
	driftReverted:   apiwire.DriftReverted,
	driftSuperseded: apiwire.DriftSuperseded,
}

// apiDrift is the record as a list item of the API, without its encoding
// (Encoded).
func (d *driftRecord) apiDrift() apiwire.Drift {
	out := apiwire.Drift{
		ID:               d.ID,
		DriftID:          d.DriftID,
		Server:           d.Server,
		At:               d.At,
		ChangedAt:        d.changedAt(),
		PreviousContract: d.PreviousContract,
		CurrentContract:  d.CurrentContract,
		PreviousServer:   d.PreviousServer.api(),
		CurrentServer:    d.CurrentServer.api(),
		Severity:         d.Severity,
		Summary:          d.Summary,
		Description:      d.Description,
		Changes:          d.Changes,
		State:            apiStates[d.State],
		ClosedAt:         d.ClosedAt,
		Truncated:        d.Truncated,
	}
	if a := d.Accepted; a != nil {
		out.Accepted = &apiwire.Acceptance{By: a.By, At: a.At, Authenticated: a.Authenticated, Comment: a.Comment}
	}
	return out
}

// changedAt is when the server changed: At for a record stored before the
// history kept the change's own time.
func (d *driftRecord) changedAt() time.Time {
	if d.ChangedAt.IsZero() {
		return d.At
	}
	return d.ChangedAt
}

// apiDetail is the record as GET /drifts/{id} answers it (the extension
// adds the next step).
func (d *driftRecord) apiDetail() apiwire.DriftDetail {
	out := apiwire.DriftDetail{Drift: d.apiDrift(), Definitions: make([]apiwire.DefinitionChange, len(d.Definitions))}
	for i, dc := range d.Definitions {
		out.Definitions[i] = apiwire.DefinitionChange{
			Subject: dc.Subject, Name: dc.Name, Before: dc.Before, After: dc.After,
			BeforeDigest: dc.BeforeDigest, AfterDigest: dc.AfterDigest, Truncated: dc.Truncated,
		}
	}
	return out
}

func (s *serverRecord) api() *apiwire.ServerInfo {
	if s == nil {
		return nil
	}
	return &apiwire.ServerInfo{Name: s.Name, Version: s.Version}
}
