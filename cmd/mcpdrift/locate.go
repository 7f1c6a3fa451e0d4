package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
)

// locator says where in the compared files a change is, for the formats
// that annotate files (SARIF for code scanning, GitHub workflow commands):
// the file holding the definition, and the line of its name. diff points a
// change at the NEW contract's file and a removed definition at the OLD
// one's; check points everything at the lock, the file a release commits.
type locator struct {
	oldFiles, newFiles []string
	texts              map[string][]byte
}

// newLocator takes the OLD and NEW arguments (files, directories of
// files, or "-", which has no location).
func newLocator(oldArg, newArg string) *locator {
	return &locator{oldFiles: filesOf(oldArg), newFiles: filesOf(newArg), texts: map[string][]byte{}}
}

// maxLocateBytes bounds a file read to find a line.
const maxLocateBytes = 64 << 20

func filesOf(arg string) []string {
	if arg == "" || arg == "-" {
		return nil
	}
	st, err := os.Stat(arg)
	if err != nil {
		return nil
	}
	if !st.IsDir() {
		return []string{arg}
	}
	entries, err := os.ReadDir(arg)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(arg, e.Name()))
		}
	}
	slices.Sort(out)
	return out
}

// Locate returns the file and 1-based line of a change; line is 1 when the
// definition is not found in the file (a server-level change), and file
// is "" when there is no file at all (standard input).
func (l *locator) Locate(c contract.Change) (string, int) {
	if l == nil {
		return "", 0
	}
	files := l.newFiles
	if removed(c) || len(files) == 0 {
		files = l.oldFiles
	}
	if len(files) == 0 {
		return "", 0
	}
	if c.Subject != contract.KindServer {
		key := c.Subject.KeyMember()
		for _, f := range files {
			if line := l.lineOf(f, key, c.Name); line > 0 {
				return f, line
			}
		}
	}
	return files[0], 1
}

func removed(c contract.Change) bool {
	return c.RemovesDefinition() || c.Rule == contract.RuleToolRenamed
}

// lineOf finds the line of `"key": "name"` in a file.
func (l *locator) lineOf(file, key, name string) int {
	text, ok := l.texts[file]
	if !ok {
		if st, err := os.Stat(file); err == nil && st.Size() <= maxLocateBytes {
			text, _ = os.ReadFile(file)
		}
		l.texts[file] = text
	}
	re, err := regexp.Compile(`"` + regexp.QuoteMeta(key) + `"\s*:\s*` + regexp.QuoteMeta(string(canon.AppendJSONKey(nil, name))))
	if err != nil {
		return 0
	}
	loc := re.FindIndex(text)
	if loc == nil {
		return 0
	}
	return bytes.Count(text[:loc[0]], []byte("\n")) + 1
}
