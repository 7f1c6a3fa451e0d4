package mcpdriftapiextension

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/internal/metadata"
)

// Text a hostile server puts in its descriptions: the dashboard must show
// it as text. Were it parsed as markup, the image's handler would set the
// global (the script element would not run when inserted as HTML, the
// image's onerror would).
const (
	poisonScript = `<script>window.__mcpdriftPoisoned = "script"</script>`
	poisonImage  = `<img src=x onerror="window.__mcpdriftPoisoned = 'img'">`
	// poisonedForecast is get_forecast's description in the examples below.
	poisonedForecast = "Get tomorrow's forecast for a city. " + poisonScript + poisonImage
	// poisonedWeather is get_weather's new description (a text change).
	poisonedWeather = "Current conditions for a city, with temperature in Celsius and wind in km/h. " + poisonImage
)

// exampleDrift is a receiver's view that serves the API's example
// responses (testdata/), with poisoned descriptions, and accepts the open
// drift of demo-tools once.
type exampleDrift struct {
	mu       sync.Mutex
	servers  []controlplane.ServerStatus
	detail   controlplane.ServerDetail // demo-tools
	page     controlplane.DriftPage
	drift    controlplane.DriftDetail
	result   controlplane.AcceptResult
	open     string // demo-tools' newest open drift; "" once accepted
	accepted []controlplane.Principal
}

var _ controlplane.DriftSource = (*exampleDrift)(nil)

func newExampleDrift(t testing.TB) *exampleDrift {
	t.Helper()
	x := &exampleDrift{}
	var list controlplane.ServerList
	readExample(t, "servers.json", &list)
	x.servers = list.Servers
	readExample(t, "server.json", &x.detail)
	readExample(t, "drifts.json", &x.page)
	readExample(t, "drift.json", &x.drift)
	readExample(t, "accept.json", &x.result)
	x.open = x.drift.ID

	// Poison the descriptions wherever the dashboard shows them.
	for _, d := range x.page.Drifts {
		poisonChanges(t, d.Changes)
	}
	poisonChanges(t, x.drift.Changes)
	for i, d := range x.drift.Definitions {
		if d.Name == "get_forecast" {
			x.drift.Definitions[i].After = withDescription(t, d.After, poisonedForecast)
		}
		if d.Name == "get_weather" {
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

func poisonChanges(t testing.TB, changes []contract.Change) {
	for i, c := range changes {
		switch c.Rule {
		case "tool.added":
			changes[i].After = withDescription(t, c.After, poisonedForecast)
		case "tool.description.changed":
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

func readExample(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
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
	return slices.Clone(x.accepted)
}

// status applies an accept to a status (the caller holds mu).
func (x *exampleDrift) status(s controlplane.ServerStatus) controlplane.ServerStatus {
	if s.Name == x.detail.Name && x.open == "" {
		s.Status, s.OpenDrift = controlplane.StatusUp, nil
	}
	return s
}

// state applies an accept to a drift (the caller holds mu).
func (x *exampleDrift) state(d controlplane.Drift) controlplane.Drift {
	if x.open == "" && d.State == controlplane.DriftOpen {
		d.State, d.ClosedAt, d.Accepted = controlplane.DriftAccepted, &x.result.At, x.result.Accepted[0].Accepted
	}
	return d
}

func (x *exampleDrift) Servers() []controlplane.ServerStatus {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]controlplane.ServerStatus, len(x.servers))
	for i, s := range x.servers {
		out[i] = x.status(s)
	}
	return out
}

func (x *exampleDrift) Server(name string) (controlplane.ServerDetail, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if name == x.detail.Name {
		d := x.detail
		d.ServerStatus = x.status(d.ServerStatus)
		return d, nil
	}
	for _, s := range x.servers {
		if s.Name == name {
			return controlplane.ServerDetail{ServerStatus: s}, nil
		}
	}
	return controlplane.ServerDetail{}, controlplane.ErrUnknownServer
}

func (x *exampleDrift) Drifts(server string, limit int) (controlplane.DriftPage, error) {
	if _, err := x.Server(server); err != nil {
		return controlplane.DriftPage{}, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if server != x.page.Server {
		return controlplane.DriftPage{Server: server, Drifts: []controlplane.Drift{}}, nil
	}
	p := x.page
	p.Drifts = nil
	for _, d := range x.page.Drifts[:min(limit, len(x.page.Drifts))] {
		p.Drifts = append(p.Drifts, x.state(d))
	}
	return p, nil
}

func (x *exampleDrift) Drift(id string) (controlplane.DriftDetail, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if id == x.drift.ID {
		d := x.drift
		d.Drift = x.state(d.Drift)
		return d, nil
	}
	for _, d := range x.page.Drifts { // older entries: no definitions kept
		if d.ID == id {
			return controlplane.DriftDetail{Drift: d, Definitions: []controlplane.DefinitionChange{}}, nil
		}
	}
	return controlplane.DriftDetail{}, controlplane.ErrUnknownDrift
}

func (x *exampleDrift) Accept(_ context.Context, server string, req controlplane.AcceptRequest, by controlplane.Principal) (controlplane.AcceptResult, error) {
	if _, err := x.Server(server); err != nil {
		return controlplane.AcceptResult{}, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case server != x.detail.Name || x.open == "":
		return controlplane.AcceptResult{}, controlplane.ErrNoOpenDrift
	case req.Drift != "" && req.Drift != x.open:
		return controlplane.AcceptResult{}, controlplane.ErrDriftMismatch
	}
	x.open = ""
	x.accepted = append(x.accepted, by)
	r := x.result
	r.By = by.Name
	r.Accepted = []controlplane.Drift{x.state(x.drift.Drift)}
	r.Accepted[0].Accepted = &controlplane.Acceptance{By: by.Name, At: r.At, Authenticated: by.Authenticated, Comment: req.Comment}
	x.result.Accepted = r.Accepted
	return r, nil
}

// exampleImpact is a processor's view answering from impact.json (for
// create_ticket) and impact_no_callers.json (any other tool).
type exampleImpact struct {
	callers, none controlplane.Impact
}

var _ controlplane.ImpactSource = (*exampleImpact)(nil)

func newExampleImpact(t testing.TB) *exampleImpact {
	t.Helper()
	x := &exampleImpact{}
	readExample(t, "impact.json", &x.callers)
	readExample(t, "impact_no_callers.json", &x.none)
	return x
}

func (x *exampleImpact) Windows() (window, recent time.Duration) { return 24 * time.Hour, time.Hour }

func (x *exampleImpact) Impact(_ context.Context, q controlplane.ImpactQuery) (controlplane.Impact, error) {
	if q.Server != x.callers.Server {
		return controlplane.Impact{}, controlplane.ErrUnknownServer
	}
	if q.Tool == x.callers.Tool {
		return x.callers, nil
	}
	out := x.none
	out.Tool = q.Tool
	return out, nil
}

// serveExamples serves the dashboard and the API with the given views (nil:
// not registered), behind authn when set, and returns the dashboard's URL.
func serveExamples(t testing.TB, drift controlplane.DriftSource, impact controlplane.ImpactSource, authn func(http.Handler) http.Handler) string {
	t.Helper()
	e := newAPIExtension(extensiontest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config))
	if drift != nil {
		if _, err := e.RegisterDriftSource(component.MustNewID("mcpdrift"), drift); err != nil {
			t.Fatal(err)
		}
	}
	if impact != nil {
		if _, err := e.RegisterImpactSource(component.MustNewID("mcpimpact"), impact); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(newRouter(e, authn))
	t.Cleanup(srv.Close)
	return strings.TrimSuffix(srv.URL, "/") + "/"
}
