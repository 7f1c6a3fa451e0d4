package gate

import (
	"fmt"
	"strings"
	"testing"
)

// TestFamilyBounded: the inputSchemas kept for all sessions stay within
// their bounds however many definitions a server goes through, and one
// kept schema is shared.
func TestFamilyBounded(t *testing.T) {
	f := newFamily()
	big := []byte(`{"description":"` + strings.Repeat("x", 1<<20) + `"}`)
	for i := range 200 {
		f.intern(Definitions{"t": {Digest: fmt.Sprint("d", i), Schema: big}})
	}
	if f.bytes > maxSchemaBytes || len(f.schemas) > maxSchemas || len(f.schemas) == 0 {
		t.Fatalf("%d schemas, %d bytes kept", len(f.schemas), f.bytes)
	}
	again := f.intern(Definitions{"t": {Digest: "d0", Schema: append([]byte(nil), big...)}})
	if &again["t"].Schema[0] != &f.schemas["d0"][0] {
		t.Fatal("an equal schema was not shared")
	}
}
