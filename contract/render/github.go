package render

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
)

// GitHub workflow-command output (format github): an ::error, ::warning
// or ::notice line per breaking, warning and compatible change (info is
// left out), annotated on the file the change is in (see Locator), then a
// summary line. Values are escaped as the runner requires, so server text
// can neither break a line nor start a command of its own.

type githubFormat struct{ loc Locator }

func (f githubFormat) Format(w io.Writer, r *contract.Report) error {
	loc := f.loc
	var b strings.Builder
	for _, c := range r.Changes {
		cmd := githubCommand(c.Severity)
		if cmd == "" {
			continue
		}
		props := []string{"title=" + escapeProperty(fmt.Sprintf("MCP %s change: %s", c.Severity, c.Rule))}
		if file, line := loc.Locate(c); file != "" {
			props = append(props, "file="+escapeProperty(filepath.ToSlash(file)), fmt.Sprintf("line=%d", line))
		}
		fmt.Fprintf(&b, "::%s %s::%s\n", cmd, strings.Join(props, ","), escapeData(changeSentence(c)))
	}
	fmt.Fprintf(&b, "mcpdrift: %s (%s): %s\n", r.Worst(), r.Summary().String(), r.OneLine())
	_, err := io.WriteString(w, b.String())
	return err
}

func githubCommand(s contract.Severity) string { return levels[s].github }

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
