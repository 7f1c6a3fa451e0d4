package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
)

// Formatter writes a report in one output format.
type Formatter interface {
	Format(w io.Writer, r *contract.Report) error
}

// Locator says where in the compared files a change is (file "" when there
// is none), for the formats that annotate files: SARIF and GitHub.
type Locator interface {
	Locate(c contract.Change) (file string, line int)
}

// Formats are the names New accepts.
var Formats = []string{"text", "json", "markdown", "sarif", "github"}

// New returns the formatter named format; loc places changes for the
// formats that annotate files, and version names the tool in SARIF (the
// caller's release), neither used by the others.
func New(format string, loc Locator, version string) (Formatter, error) {
	switch format {
	case "text":
		return textFormat(Text), nil
	case "markdown":
		return textFormat(Markdown), nil
	case "json":
		return jsonFormat{}, nil
	case "sarif":
		return sarifFormat{loc, version}, nil
	case "github":
		return githubFormat{loc}, nil
	}
	return nil, fmt.Errorf("format must be one of %s, not %q", strings.Join(Formats, ", "), format)
}

// textFormat is a format rendered to a string (text, Markdown).
type textFormat func(*contract.Report) string

func (f textFormat) Format(w io.Writer, r *contract.Report) error {
	_, err := io.WriteString(w, f(r))
	return err
}

// jsonFormat is the report as contract.Report marshals it, one line.
type jsonFormat struct{}

func (jsonFormat) Format(w io.Writer, r *contract.Report) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
