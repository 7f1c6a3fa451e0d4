// Package sbom corrects what cyclonedx-gomod writes of our own modules in the
// SBOM of a binary built from a checkout. There every sibling module is
// replaced by a directory (replace ../contract), and the binary's build
// information records the replacement, so the SBOM names the component
// "../contract" at version "(devel)": no module path, no version, not a
// package URL any scanner resolves. The binary was built from one commit,
// which a release tags for every module at one version, so each such
// component is the module it replaces at that version.
package sbom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// local maps each directory that replaces a module in deps to that module's
// path. Only directory replacements count (their version is "(devel)" or
// empty): a module replaced by another module at a version is a published
// module and stays as it is.
func local(deps []*debug.Module) map[string]string {
	m := map[string]string{}
	for _, d := range deps {
		if d.Replace != nil && isDir(d.Replace.Path) {
			m[d.Replace.Path] = d.Path
		}
	}
	return m
}

// isDir reports whether a replacement path is a directory, as the go command
// tells them from module paths: it begins with ./ or ../ or is absolute.
func isDir(p string) bool {
	return strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == "." || p == ".." || filepath.IsAbs(p)
}

// Fix rewrites the CycloneDX JSON sbom of the binary whose build
// information is info (buildinfo.ReadFile): every component that is a directory replacement becomes
// the module it replaces at version, in its name, version, package URL and
// bom-ref, and so does every reference to it (dependencies, compositions).
// It fails when a component names a directory that replaces no module in
// the binary, rather than leave it unnamed.
func Fix(sbom []byte, info *debug.BuildInfo, version string) ([]byte, error) {
	dirs := local(info.Deps)
	dec := json.NewDecoder(bytes.NewReader(sbom))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("the SBOM: %w", err)
	}
	if doc["bomFormat"] != "CycloneDX" {
		return nil, fmt.Errorf("the SBOM is not CycloneDX JSON (bomFormat %v)", doc["bomFormat"])
	}
	comps, _ := doc["components"].([]any)
	// refs maps each old bom-ref (and package URL) prefix to the new one:
	// "pkg:golang/../contract@(devel)" to "pkg:golang/<module>@<version>".
	refs := map[string]string{}
	for _, c := range comps {
		comp, ok := c.(map[string]any)
		if !ok {
			continue
		}
		name, _ := comp["name"].(string)
		if !isDir(name) {
			continue
		}
		mod, ok := dirs[name]
		if !ok {
			return nil, fmt.Errorf("component %q is a directory that replaces no module in the binary", name)
		}
		old, _ := comp["version"].(string)
		refs["pkg:golang/"+name+"@"+old] = "pkg:golang/" + mod + "@" + version
		comp["name"], comp["version"] = mod, version
	}
	if len(refs) == 0 {
		return sbom, nil
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		case string:
			for old, repl := range refs {
				// The version ends the coordinates: "?" (qualifiers), "#"
				// (a package) or the end follows it.
				if rest, ok := strings.CutPrefix(v, old); ok && (rest == "" || rest[0] == '?' || rest[0] == '#') {
					return repl + rest
				}
			}
		}
		return v
	}
	walk(doc)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
