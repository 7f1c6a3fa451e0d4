package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// make fuzz gives each target FUZZTIME. Go minimizes every new interesting
// input for up to -fuzzminimizetime (60s by default) before that worker
// fuzzes again, so without a short budget a 20s run spent its time
// minimizing its first finds (FuzzDecodeIndex: 9 executions in 20s).
func TestMakeFuzzBoundsMinimization(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mk := string(b)
	variable := func(name string) time.Duration {
		m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(\S+)\s*$`).FindStringSubmatch(mk)
		if m == nil {
			t.Fatalf("Makefile does not set %s", name)
		}
		d, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatalf("%s = %s: %v", name, m[1], err)
		}
		return d
	}
	fuzz, minimize := variable("FUZZTIME"), variable("FUZZMINIMIZETIME")
	if minimize <= 0 || minimize*10 > fuzz {
		t.Errorf("FUZZMINIMIZETIME %v: want a positive budget of at most a tenth of FUZZTIME %v", minimize, fuzz)
	}
	recipe := mk[strings.Index(mk, "\nfuzz:"):]
	if i := strings.Index(recipe, "\n\n"); i > 0 {
		recipe = recipe[:i]
	}
	if !strings.Contains(recipe, "-fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME)") {
		t.Errorf("the fuzz recipe does not pass -fuzzminimizetime:\n%s", recipe)
	}
}
