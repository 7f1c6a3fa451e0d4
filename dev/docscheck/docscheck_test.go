package docscheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

const root = "../.."

// defaultDistribution validates examples that name no other.
const defaultDistribution = "otelcol-mcpdrift"

// validateWith is the header line naming the distribution an example is
// written for: "# validate-with: otelcol-mcpdrift-extras".
var validateWith = regexp.MustCompile(`(?m)^# validate-with: (\S+)$`)

// buildHint says how to build each distribution the examples need.
var buildHint = map[string]string{
	"otelcol-mcpdrift":        "make distro",
	"otelcol-mcpdrift-extras": "make distro-extras",
}

// examples lists the example Collector configurations (ocb manifests, named
// builder-*.yaml, are not Collector configurations).
func examples(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "docs", "examples"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".yaml") && !strings.HasPrefix(d.Name(), "builder-") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example configurations under docs/examples")
	}
	return files
}

func rel(path string) string {
	r, _ := filepath.Rel(root, path)
	return filepath.ToSlash(r)
}

// TestExamplesValidate runs `<distribution> validate --config <file>` on
// every example, with the distribution it names. A distribution that has
// not been built skips its examples, loudly.
func TestExamplesValidate(t *testing.T) {
	t.Parallel()
	for _, file := range examples(t) {
		t.Run(rel(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dist := defaultDistribution
			if m := validateWith.FindSubmatch(src); m != nil {
				dist = string(m[1])
			}
			bin, err := filepath.Abs(filepath.Join(root, "_build", dist, dist))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(bin); err != nil {
				hint, ok := buildHint[dist]
				if !ok {
					t.Fatalf("%s names distribution %q, which no build recipe makes", rel(file), dist)
				}
				testservers.SkipLoudly(t, fmt.Sprintf("_build/%s/%s is not built, so this example was NOT validated; build it with: %s", dist, dist, hint))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			abs, _ := filepath.Abs(file)
			out, err := exec.CommandContext(ctx, bin, "validate", "--config", abs).CombinedOutput()
			if err != nil {
				t.Fatalf("%s validate --config %s: %v\n%s", dist, rel(file), err, out)
			}
		})
	}
}

// TestDocsShowValidatedFiles checks that every block the docs mark as an
// example is byte for byte the file that TestExamplesValidate validates, and
// that every example is shown or linked somewhere in docs/.
func TestDocsShowValidatedFiles(t *testing.T) {
	var all bytes.Buffer
	for _, page := range docPages(t) {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(src)
	}
	shown := 0
	for _, b := range allBlocks(t) {
		path, ok := strings.CutPrefix(b.marker, "example: ")
		if !ok {
			continue
		}
		want, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Errorf("%s shows %s: %v", b.where(), path, err)
			continue
		}
		if b.body != string(want) {
			t.Errorf("%s shows a %s that differs from the file; copy the file into the block", b.where(), path)
		}
		shown++
	}
	if shown == 0 {
		t.Error("no docs page shows an example file")
	}
	for _, file := range examples(t) {
		if !bytes.Contains(all.Bytes(), []byte(rel(file))) {
			t.Errorf("%s is neither shown nor linked from README.md or docs/*.md", rel(file))
		}
	}
}

// gomodLine is an ocb component line: "- gomod: <module> <version>".
var gomodLine = regexp.MustCompile(`gomod: (\S+) (v\S+)`)

// TestCollectorDocPinsTheBuildVersions checks that the module versions
// docs/collector.md tells users to build with are those the project's own
// builder-config.yaml builds (and so the ones the examples were validated
// with).
func TestCollectorDocPinsTheBuildVersions(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(root, "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]string{}
	for _, m := range gomodLine.FindAllStringSubmatch(string(manifest), -1) {
		built[m[1]] = m[2]
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "collector.md"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range gomodLine.FindAllStringSubmatch(string(doc), -1) {
		if want, ok := built[m[1]]; ok && m[1] != "github.com/mcpdrift/mcpdrift" {
			checked++
			if m[2] != want {
				t.Errorf("docs/collector.md pins %s %s, builder-config.yaml builds %s", m[1], m[2], want)
			}
		}
	}
	if checked < 5 {
		t.Errorf("docs/collector.md names only %d of the modules builder-config.yaml builds", checked)
	}
}
