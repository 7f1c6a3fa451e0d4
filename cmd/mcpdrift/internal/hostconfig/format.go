package hostconfig

import (
	"errors"
	"path/filepath"
	"strings"
)

// Format is the syntax of a host's configuration file.
type Format int

// Formats.
const (
	JSON Format = iota // JSON, or JSONC (comments, trailing commas)
	TOML               // Codex CLI's config.toml
)

// FormatOf returns the format of the file at path, by its extension.
func FormatOf(path string) Format {
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return TOML
	}
	return JSON
}

// Wrap routes every server of src through the proxy.
func (f Format) Wrap(src []byte, o Options) (*Result, error) {
	if f == TOML {
		return wrapTOML(src, o)
	}
	return Wrap(src, o)
}

// Unwrap restores the entries wrap rewrote.
func (f Format) Unwrap(src []byte, skip []string, force bool) (*Result, error) {
	if f == TOML {
		return unwrapTOML(src, skip, force)
	}
	return Unwrap(src, skip, force)
}

// Server is one server of a configuration file, as wrap --list shows it.
type Server struct {
	Name, Scope string
	// Wrapped reports whether the host starts it through mcpdrift proxy.
	Wrapped bool
}

// List returns the servers of src; a file that holds none is no error.
func (f Format) List(src []byte) ([]Server, error) {
	if f == TOML {
		return listTOML(src)
	}
	root, _, err := Parse(src)
	if err != nil {
		return nil, err
	}
	groups, err := serverGroups(src, root)
	if errors.Is(err, ErrNoServers) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	top, err := newTopStash(src, root, "", "")
	if err != nil {
		return nil, err
	}
	var out []Server
	for _, g := range groups {
		for _, m := range g.node.Members {
			n := m.Value
			wrapped := n.Get(StashKey) != nil || (g.scope == "" && top.of(m.Key) != nil) || isProxy(strValue(n.Get("command")), n.Get("args"))
			out = append(out, Server{Name: m.Key, Scope: g.scope, Wrapped: wrapped})
		}
	}
	return out, nil
}
