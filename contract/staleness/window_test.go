package staleness_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract/staleness"
)

func TestWindow(t *testing.T) {
	w := staleness.NewWindow(10 * time.Second)
	if w.Take("a", at(0)) {
		t.Fatal("a call to a tool that never changed refused")
	}
	w.Served("a", at(0))
	w.Served("b", at(0))
	w.Served("c", at(0))
	if !w.Take("a", at(3)) {
		t.Fatal("the first call after the change passed")
	}
	if w.Take("a", at(4)) {
		t.Fatal("the second call after the change refused")
	}
	if w.Take("b", at(10)) {
		t.Fatal("a call after the window refused")
	}
	w.Done("c")
	if w.Take("c", at(1)) {
		t.Fatal("a change already told refused again")
	}
	w.Served("a", at(20))
	if !w.Take("a", at(21)) {
		t.Fatal("a second change not guarded")
	}
	var off *staleness.Window = staleness.NewWindow(0)
	off.Served("a", at(0))
	off.Done("a")
	if off != nil || off.Take("a", at(0)) {
		t.Fatal("a window of 0 refuses")
	}
}

// TestWindowBounded: a session that is served changes of more tools than
// the bound keeps guarding the newest once the old ones expire.
func TestWindowBounded(t *testing.T) {
	w := staleness.NewWindow(time.Second)
	for i := range 5000 {
		w.Served(fmt.Sprint("t", i), at(0))
	}
	w.Served("late", at(5))
	if !w.Take("late", at(5)) {
		t.Fatal("the window stopped guarding once full")
	}
}

// TestSchemasBounded: the cache stays within its bound and still answers.
func TestSchemasBounded(t *testing.T) {
	s := staleness.NewSchemas(8, nil)
	for i := range 100 {
		d := def(t, fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i))
		if sch, err := s.Get(d); err != nil || sch == nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n > 8 {
		t.Fatalf("%d entries kept, bound 8", n)
	}
}
