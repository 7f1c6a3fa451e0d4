package idlemap

import (
	"testing"
	"time"
)

// At the cap the least recently used entry goes; a lookup counts as use.
func TestCapDropsLeastRecentlyUsed(t *testing.T) {
	var evicted []string
	m := Map[int]{Max: 2, Idle: time.Nanosecond, Evicted: func(k string, _ int) { evicted = append(evicted, k) }}
	m.Put("a", 1)
	m.Put("b", 2)
	m.Get("a") // b is now the least recently used
	m.Put("c", 3)
	if _, ok := m.Get("b"); ok || m.Len() != 2 {
		t.Errorf("b kept, %d entries", m.Len())
	}
	if len(evicted) == 0 {
		t.Error("Evicted not told")
	}
}

// An entry untouched for two sweeps goes, unless it is busy; a touched one
// stays.
func TestIdleExpiry(t *testing.T) {
	m := Map[string]{Idle: time.Millisecond, Busy: func(v string) bool { return v == "streaming" }}
	m.Put("idle", "x")
	m.Put("stream", "streaming")
	m.Put("used", "x")
	for i := range 4 {
		time.Sleep(time.Millisecond) // past Idle/2: the next Put sweeps
		m.Get("used")
		m.Put("new"+string(rune('0'+i)), "x")
	}
	if _, ok := m.Get("idle"); ok {
		t.Error("the idle entry was kept")
	}
	for _, k := range []string{"stream", "used"} {
		if _, ok := m.Get(k); !ok {
			t.Errorf("%s was dropped", k)
		}
	}
}

func TestDelete(t *testing.T) {
	var m Map[int]
	m.Put("a", 1)
	m.Put("b", 2)
	if v, ok := m.Delete("a"); !ok || v != 1 {
		t.Errorf("Delete = %d, %v", v, ok)
	}
	m.DeleteFunc(func(_ string, v int) bool { return v == 2 })
	if m.Len() != 0 {
		t.Errorf("%d left", m.Len())
	}
}
