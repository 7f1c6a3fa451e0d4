package mcpdriftapiextension

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// Text a hostile server puts in its descriptions: the dashboard must show
// it as text. Were it parsed as markup, the image's handler would set the
// global (a script element inserted as markup does not run; an image's
// onerror does).
const (
	poisonScript = `<script>window.__mcpdriftPoisoned = "script"</script>`
	poisonImage  = `<img src=x onerror="window.__mcpdriftPoisoned = 'img'">`
	// poisonedForecast is get_forecast's description in the examples.
	poisonedForecast = "Get tomorrow's forecast for a city. " + poisonScript + poisonImage
	// poisonedWeather is get_weather's new description (a text change).
	poisonedWeather = "Current conditions for a city, with temperature in Celsius and wind in km/h. " + poisonImage
)

// exampleDrift is fakeDrift (the API's examples) with poisoned
// descriptions wherever the dashboard shows them, and an accept that
// closes demo-tools' open drift, as the receiver's does: afterwards the
// server is UP and the drift accepted.
type exampleDrift struct {
	*fakeDrift
	open     string // demo-tools' newest open drift; "" once accepted (under mu)
	accepted *apiwire.Acceptance
}

var _ controlplane.DriftSource = (*exampleDrift)(nil)

func newExampleDrift(t testing.TB) *exampleDrift {
	t.Helper()
	x := &exampleDrift{fakeDrift: newFakeDrift(t)}
	x.open = x.drift.ID
	for _, d := range x.page.Drifts {
		poisonChanges(t, d.Changes)
	}
	poisonChanges(t, x.drift.Changes)
	for i, d := range x.drift.Definitions {
		switch d.Name {
		case "get_forecast":
			// A number JavaScript would print otherwise: shown as sent.
			after := withDescription(t, d.After, poisonedForecast)
			x.drift.Definitions[i].After = bytes.Replace(after, []byte(`"maximum":7`), []byte(`"maximum":7.0`), 1)
		case "get_weather":
			x.drift.Definitions[i].After = withDescription(t, d.After, poisonedWeather)
		}
	}
	var snap map[string]any
	if err := json.Unmarshal(x.detail.Snapshot, &snap); err != nil {
		t.Fatal(err)
	}
	for _, e := range snap["tools"].([]any) {
		def := e.(map[string]any)["definition"].(map[string]any)
		switch def["name"] {
		case "get_forecast":
			def["description"] = poisonedForecast
		case "get_weather":
			def["description"] = poisonedWeather
		}
	}
	x.detail.Snapshot = mustJSON(t, snap)
	return x
}

// poisonChanges poisons the changed description; get_forecast's change
// (tool.added) names the tool only, its definition is in Definitions.
func poisonChanges(t testing.TB, changes []contract.Change) {
	for i, c := range changes {
		if c.Rule == "tool.description.changed" {
			changes[i].After = mustJSON(t, poisonedWeather)
		}
	}
}

func withDescription(t testing.TB, def json.RawMessage, desc string) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(def, &m); err != nil {
		t.Fatal(err)
	}
	m["description"] = desc
	return mustJSON(t, m)
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// setOpen makes another drift the newest open one (as if it had just
// arrived), so that accepting what the page shows is refused.
func (x *exampleDrift) setOpen(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.open = id
}

// principals returns who accepted, in order.
func (x *exampleDrift) principals() []controlplane.Principal {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []controlplane.Principal
	for _, c := range x.fakeDrift.accepted {
		out = append(out, c.by)
	}
	return out
}

// status and state apply an accept to what is read (the caller holds mu).
func (x *exampleDrift) status(s apiwire.ServerStatus) apiwire.ServerStatus {
	if s.Name == x.detail.Name && x.accepted != nil {
		s.Status, s.OpenDrift = apiwire.StatusUp, nil
	}
	return s
}

func (x *exampleDrift) state(d apiwire.Drift) apiwire.Drift {
	if x.accepted != nil && d.State == apiwire.DriftOpen {
		d.State, d.ClosedAt, d.Accepted = apiwire.DriftAccepted, &x.accepted.At, x.accepted
	}
	return d
}

func (x *exampleDrift) Servers() []apiwire.ServerStatus {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]apiwire.ServerStatus, len(x.servers))
	for i, s := range x.servers {
		out[i] = x.status(s)
	}
	return out
}

func (x *exampleDrift) Server(name string) (apiwire.ServerDetail, error) {
	d, err := x.fakeDrift.Server(name)
	x.mu.Lock()
	defer x.mu.Unlock()
	d.ServerStatus = x.status(d.ServerStatus)
	return d, err
}

func (x *exampleDrift) Drifts(name string, q controlplane.DriftQuery) (apiwire.DriftPage, error) {
	p, err := x.fakeDrift.Drifts(name, q)
	x.mu.Lock()
	defer x.mu.Unlock()
	p.Drifts = append([]apiwire.Drift(nil), p.Drifts...)
	for i, d := range p.Drifts {
		p.Drifts[i] = x.state(d)
	}
	return p, err
}

// Drift also answers for the page's older entries, without definitions (as
// for an entry whose definitions the history's byte budget left out).
func (x *exampleDrift) Drift(id string) (apiwire.DriftDetail, error) {
	d, err := x.fakeDrift.Drift(id)
	if errors.Is(err, controlplane.ErrUnknownDrift) {
		for _, e := range x.page.Drifts {
			if e.ID == id {
				d, err = apiwire.DriftDetail{Drift: e, Definitions: []apiwire.DefinitionChange{}}, nil
			}
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	d.Drift = x.state(d.Drift)
	return d, err
}

func (x *exampleDrift) Accept(ctx context.Context, name string, req apiwire.AcceptRequest, by controlplane.Principal) (apiwire.AcceptResult, error) {
	x.mu.Lock()
	open := x.open
	x.mu.Unlock()
	switch {
	case name == x.detail.Name && open == "":
		return apiwire.AcceptResult{}, controlplane.ErrNoOpenDrift
	case name == x.detail.Name && req.Drift != "" && req.Drift != open:
		return apiwire.AcceptResult{}, controlplane.ErrDriftMismatch
	}
	res, err := x.fakeDrift.Accept(ctx, name, req, by)
	if err == nil {
		x.mu.Lock()
		x.open, x.accepted = "", res.Accepted[0].Accepted
		x.mu.Unlock()
	}
	return res, err
}

// exampleImpact is fakeImpact, with no recent callers for the tools the
// examples do not cover (get_weather).
type exampleImpact struct{ *fakeImpact }

func newExampleImpact() exampleImpact {
	return exampleImpact{&fakeImpact{window: 24 * time.Hour, recent: time.Hour}}
}

func (x exampleImpact) Impact(ctx context.Context, q controlplane.ImpactQuery) (apiwire.Impact, error) {
	out, err := x.fakeImpact.Impact(ctx, q)
	if errors.Is(err, controlplane.ErrUnknownTool) {
		out, err = x.fakeImpact.Impact(ctx, controlplane.ImpactQuery{Server: q.Server, Tool: "get_forecast", Window: q.Window})
		out.Tool = q.Tool
	}
	return out, err
}

// serveExamples starts the extension with the given views (nil: not
// registered), behind an auth extension when exts holds one, and returns
// the dashboard's URL.
func serveExamples(t *testing.T, drift controlplane.DriftSource, impact controlplane.ImpactSource, tweak func(*Config), exts map[component.ID]component.Component) string {
	t.Helper()
	a := startAPI(t, tweak, exts)
	a.register(drift, impact)
	return a.base + "/"
}
