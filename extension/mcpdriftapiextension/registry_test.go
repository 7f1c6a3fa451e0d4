package mcpdriftapiextension

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
)

// TestRegistry: names stay unique across receivers, one processor answers,
// and a component that shuts down takes its view back.
func TestRegistry(t *testing.T) {
	a := startAPI(t, nil, nil)
	one, two := component.MustNewIDWithName("mcpdrift", "a"), component.MustNewIDWithName("mcpdrift", "b")
	unregister, err := a.ext.RegisterDriftSource(one, newFakeDrift(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ext.RegisterDriftSource(two, newFakeDrift(t)); err == nil || !strings.Contains(err.Error(), `"billing"`) {
		t.Errorf("the same target names under two receivers: %v", err)
	}
	if _, err := a.ext.RegisterDriftSource(one, &fakeDrift{}); err == nil {
		t.Error("one receiver registered twice")
	}
	if _, err := a.ext.RegisterDriftSource(two, &fakeDrift{}); err != nil {
		t.Errorf("a second receiver with other targets: %v", err)
	}
	unregister()
	if got := a.ext.driftSources(); len(got) != 1 || got[0].id != two {
		t.Errorf("after unregister: %+v", got)
	}
	im := &fakeImpact{window: time.Hour, recent: time.Minute}
	undo, err := a.ext.RegisterImpactSource(component.MustNewID("mcpimpact"), im)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ext.RegisterImpactSource(component.MustNewIDWithName("mcpimpact", "x"), im); err == nil {
		t.Error("two processors registered")
	}
	undo()
	if a.ext.impactSrc() != nil {
		t.Error("processor still registered")
	}
}
